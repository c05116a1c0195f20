"""Alert evaluation cost at fleet scale (DESIGN §9: 10,000 targets at 1-minute intervals).

    python -m benchmarks.alert_engine [--targets 10000] [--database URL] [--rounds 5] [--agents 1,3]

Builds a config of N targets with a regression and a threshold rule, stores a
warm-up hour of samples, then times evaluation rounds the way the leader runs
them every 30 s: each round first stores one new sample per target for half
of the targets (a minute of probing seen every 30 s), then evaluates. Prints
a table: round, samples read, evaluations, seconds. The first round is the
cold start (every detector warms up on history); the rest are steady state.

`--agents 1,3` runs the same fleet probed from one vantage point, then from
three (one series per rule, target and agent: DESIGN §11), one after the
other in one run, and prints the steady-state cost per sample of each and
their ratio (the goal: three agents within 1.5x of one agent, per sample).
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from monitor.alerts.engine import AlertEngine, EngineOptions
from monitor.config import load_config_text
from monitor.sample import Sample
from monitor.storage import migrate
from monitor.storage.db import make_engine
from monitor.storage.queries import insert_samples


def build_config(n_targets: int, tmp: Path):
    providers, regions, prompts = 10, 5, 4
    models = max(1, n_targets // (providers * regions * prompts))
    spec = {
        "prompts": {
            f"p{i}": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 8} for i in range(prompts)
        },
        "providers": {
            f"prov{p}": {
                "protocol": "openai-chat",
                "regions": {f"r{r}": f"http://127.0.0.1:9/{p}/{r}/v1" for r in range(regions)},
                "models": [f"model-{m}" for m in range(models)],
            }
            for p in range(providers)
        },
        "checks": [
            {
                "providers": [f"prov{p}" for p in range(providers)],
                "prompts": [f"p{i}" for i in range(prompts)],
                "interval": "1m",
            }
        ],
        "alerts": [
            {"name": "ttft-regression", "metric": "ttft_ms", "kind": "regression", "min_change": "50%"},
            {"name": "errors", "metric": "error_rate", "kind": "threshold", "above": "20%", "window": "15m"},
        ],
        "notifiers": [{"name": "log", "type": "log"}],
    }
    return load_config_text(json.dumps(spec), base_dir=tmp, env={})


RULES = 2  # build_config's: a regression and a threshold


def samples_for(targets, at: datetime, rng: random.Random, agents: int = 1) -> list[Sample]:
    out = []
    for t, agent in ((t, a) for t in targets for a in range(agents)):
        ok = rng.random() > 0.02
        ttft = 300 * rng.lognormvariate(0, 0.2)
        out.append(
            Sample(
                target=t.id,
                provider=t.provider,
                model=t.model,
                region=t.region,
                prompt=t.prompt,
                started_at=at + timedelta(seconds=rng.random() * 30),
                ok=ok,
                error_kind=None if ok else "server_error",
                ttft_ms=ttft if ok else None,
                total_ms=ttft + 250.0 if ok else None,
                agent="bench" if agents == 1 else f"bench-{agent}",
            )
        )
    return out


class Fleet:
    """One database and engine: `targets` probed from `agents` vantage points."""

    def __init__(
        self, n_targets: int, agents: int, history_min: int, database: str | None, settle_s: float = 0.0
    ) -> None:
        tmp = Path(tempfile.mkdtemp())
        self.agents = agents
        self.config = build_config(n_targets, tmp)
        self.targets = self.config.targets
        self.db = make_engine(database or f"sqlite:///{tmp / 'bench.db'}")
        migrate.upgrade(self.db)
        self.rng = random.Random(1)
        self.now = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=history_min)
        t0 = time.perf_counter()
        for minute in range(history_min):
            insert_samples(self.db, samples_for(self.targets, self.now + timedelta(minutes=minute), self.rng, agents))
        self.now += timedelta(minutes=history_min)
        print(
            f"{len(self.targets)} targets x 2 rules x {agents} agent{'s' if agents > 1 else ''}; "
            f"history {history_min} min stored in {time.perf_counter() - t0:.1f}s"
        )
        self.settle_s = settle_s
        self.engine = AlertEngine(EngineOptions(settle_s=settle_s))

    def round(self, i: int) -> tuple[int, int, float, float]:
        """(samples read, samples evaluated, seconds, CPU seconds); round 0 is the cold start. A sample is
        evaluated once per rule; more can be read (a target's read resumes at its slowest agent's cursor).
        CPU seconds (this process only) are what to compare across runs on a shared machine: wall time
        there moves 3x with whatever else runs."""
        if i:
            self.now += timedelta(seconds=30)
            half = self.targets[(i % 2) :: 2]
            insert_samples(self.db, samples_for(half, self.now - timedelta(seconds=30), self.rng, self.agents))
        cpu_before = time.process_time()
        stats = self.engine.evaluate(self.db, self.config, now=self.now + timedelta(seconds=1 + self.settle_s))
        return stats.samples, stats.evaluations // RULES, stats.elapsed_s, time.process_time() - cpu_before


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--targets", type=int, default=10_000)
    parser.add_argument("--database", help="default: a temporary SQLite file")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--history-min", type=int, default=60)
    parser.add_argument("--agents", default="1", help="vantage points; a list (1,3) compares them per sample")
    parser.add_argument(
        "--settle",
        type=float,
        default=0.0,
        help="the engine's settle seconds (0: every sample at once; 15: the default)",
    )
    args = parser.parse_args()
    fleets = [Fleet(args.targets, int(a), args.history_min, args.database, args.settle) for a in args.agents.split(",")]
    # Rounds alternate between the fleets, so a busy moment of a shared machine falls on both alike.
    print(f"{'agents':>6} {'round':>5} {'read':>8} {'evaluated':>9} {'seconds':>8} {'cpu s':>6} {'us/sample':>10}")
    results: dict[int, list[tuple[int, float]]] = {f.agents: [] for f in fleets}
    for i in range(args.rounds):
        for fleet in fleets:
            read, evaluated, seconds, cpu_s = fleet.round(i)
            results[fleet.agents].append((evaluated, cpu_s))
            per = 1e6 * cpu_s / max(1, evaluated)
            print(f"{fleet.agents:>6} {i:>5} {read:>8} {evaluated:>9} {seconds:>8.2f} {cpu_s:>6.2f} {per:>10.1f}")
    for fleet in fleets:
        fleet.db.dispose()
    if len(fleets) == 1:
        ((agents, rounds),) = results.items()
        print(f"steady state: {_per_sample(rounds[1:] or rounds) * 1e6:.1f} cpu us/sample ({agents} agent(s))")
    else:
        per_sample = {a: _per_sample(r[1:] or r) for a, r in results.items()}
        cold = {a: _per_sample(r[:1]) for a, r in results.items()}
        base, base_cold = next(iter(per_sample.values())), next(iter(cold.values()))
        print(f"{'agents':>6} {'cpu us/sample steady':>21} {'ratio':>6} {'cpu us/sample cold':>19} {'ratio':>6}")
        for agents, cost in per_sample.items():
            print(
                f"{agents:>6} {cost * 1e6:>21.1f} {cost / base:>6.2f} "
                f"{cold[agents] * 1e6:>19.1f} {cold[agents] / base_cold:>6.2f}"
            )


def _per_sample(rounds: list[tuple[int, float]]) -> float:
    return sum(s for _, s in rounds) / max(1, sum(n for n, _ in rounds))


if __name__ == "__main__":
    main()
