"""How long `report sla` takes to judge a month (DESIGN §17), by matrix size: the pure core only.

    python -m benchmarks.sla_report [--targets 2 10 30] [--agents 3] [--interval-min 5] [--repeat 3]

A month (30 days, 43,200 minutes) of probes every `--interval-min` minutes from each of `--agents`
vantage points for each target, with a planted outage and slow hour, is judged by
`monitor.reports.sla.minutes.judge` (uptime and latency terms) and assessed into a report. It
prints, per size, the probes, the best-of-`--repeat` seconds and microseconds per probe, and the
peak memory traced while judging. Reading the rows from the database is left out: it is the
database's (a month of one provider is one indexed range scan of its day partitions).
"""

from __future__ import annotations

import argparse
import random
import time
import tracemalloc

from monitor.config.contracts import Contract, LatencyTerms, MinuteOk, UptimeTerms
from monitor.reports.sla.minutes import SERVER_KINDS_DEFAULT, Probe, Terms, judge
from monitor.reports.sla.period import month
from monitor.reports.sla.report import assess

PERIOD = month("2026-11")


def probes(targets: int, agents: int, interval_min: int, seed: int = 7) -> list[Probe]:
    rng = random.Random(seed)
    start = PERIOD.start.timestamp()
    outage = range(3 * 1440 + 600, 3 * 1440 + 1020)
    out = []
    for minute in range(0, PERIOD.minutes, interval_min):
        for a in range(agents):
            for t in range(targets):
                failed = minute in outage or rng.random() < 0.002
                out.append(Probe(start + minute * 60 + 5 + 10 * a, f"agent{a}", f"p/m@r:t{t}", not failed,
                                 None if not failed else "server_error", None if failed else rng.gauss(80, 8),
                                 f"req-{a}-{t}-{minute}"))  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, nargs="+", default=[2, 10, 30])
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--interval-min", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    contract = Contract(uptime=UptimeTerms(), latency=LatencyTerms(minute_ok=MinuteOk(tps_at_least=50)))
    terms = Terms(error_rate=0.05, kinds=SERVER_KINDS_DEFAULT, latency_ok=contract.latency.minute_ok)
    print(f"| targets | vantage points | probes | seconds (best of {args.repeat}) | µs per probe | peak MiB |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in args.targets:
        rows = probes(n, args.agents, args.interval_min)
        best = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            verdicts = judge(rows, PERIOD.start.timestamp(), PERIOD.minutes, terms)
            assess(contract, "p", verdicts, PERIOD)
            best = min(best, time.perf_counter() - t0)
        tracemalloc.start()
        judge(rows, PERIOD.start.timestamp(), PERIOD.minutes, terms)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        print(f"| {n} | {args.agents} | {len(rows):,} | {best:.2f} | {best / len(rows) * 1e6:.1f} | {peak:.0f} |")


if __name__ == "__main__":
    main()
