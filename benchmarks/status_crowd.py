"""A crowd on the status page (DESIGN §16, issue 33 item 7): one `firsttoken run` probing the simulator
serves /status to many concurrent clients while its probes go on; do the probes notice?

    python -m benchmarks.status_crowd [--clients 500] [--seconds 30] [--think 2] [--targets 8]
        [--interval 1] [--days 90] [--database sqlite|postgres] [--client streams|httpx] [--json]

Everything on loopback: the simulator (its own process, logging the truth of every request), the agent
(`firsttoken run --listen`, one process: 8 targets at 1 s stay below its probe-worker threshold, the
case where the page and the probes share an interpreter), and the crowd (asyncio, in this process:
each request a connection of its own on asyncio streams, or with `--client httpx` through one
httpx.AsyncClient, whose own ~2 ms of CPU a request makes 500 at once measure the client more than
the server on two cores). The one-client-alone row always uses httpx. The database holds `--days` of hourly history for every target from three vantage points,
so a render reads what a real site's does (90 daily bars, uptime windows, sparklines).

Phases, each `--seconds` long, after a warm-up:

1. quiet: no client; the probes' measurement overhead (stored TTFT minus the simulator's true TTFT of
   the same request) is the reference;
2. crowd: `--clients` clients arrive within a second (their first loads are reported apart: the
   burst), then each reloads after a think time (uniform, mean `--think` s) with its last ETag, as a
   browser revalidates, gzip accepted; bounded by the phase's end.

It prints /status's latency (one client alone, the arrival burst, the crowd's reloads), what came
back (200/304/errors), and the probes' overhead p50/p99 quiet vs during the crowd. Quote ratios and
the p99s; absolute figures depend on the machine (the crowd's own client shares its cores).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlsplit

import httpx
from sqlalchemy import insert, select

from benchmarks.soak import free_port, scratch_database
from monitor.simulator.testing import SimulatorProcess
from monitor.storage.db import make_engine
from monitor.storage.models import ALL_ROLLUP_METRICS, RollupHourly, SampleRow, rollup_source
from monitor.storage.rollups import HOUR, hour_floor, rollup_days, rollup_row

FIRSTTOKEN = [sys.executable, "-m", "monitor"]
HISTORY_AGENTS = ("hist-eu", "hist-us", "hist-ap")


@dataclass
class Options:
    clients: int = 500
    seconds: float = 30.0
    think_s: float = 2.0
    targets: int = 8
    interval_s: float = 1.0
    days: int = 90
    warmup_s: float = 20.0
    database: str = "sqlite"
    client: str = "streams"  # or httpx


@dataclass
class Result:
    options: Options
    page_bytes: int = 0
    page_gzip_bytes: int = 0
    alone_ms: list[float] = field(default_factory=list)
    burst_ms: list[float] = field(default_factory=list)
    reload_ms: list[float] = field(default_factory=list)
    answers: dict[str, int] = field(default_factory=dict)
    overhead_quiet_ms: list[float] = field(default_factory=list)
    overhead_crowd_ms: list[float] = field(default_factory=list)


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def build_config(sim_url: str, options: Options, database: str) -> tuple[dict, list[tuple[str, str, str]]]:
    """`--targets` targets over 2 providers x 2 regions, each a deterministic simulated model."""
    per = max(1, options.targets // 4)
    providers, shown = {}, []
    for p in range(2):
        models = [f"sim:ttft={90 + 20 * m + 7 * p}:itl=3:tokens=8:jitter=0.1:output_tokens={8 + m}" for m in range(per)]
        regions = {f"r{r}": f"{sim_url}/region/r{r}/v1" for r in range(2)}
        providers[f"prov{p}"] = {
            "protocol": "openai-chat",
            "api_key": "crowd-key",
            "regions": regions,
            "models": models,
        }
        shown += [(f"prov{p}", m, r) for m in models for r in regions]
    config = {
        "database": database,
        "agent": "crowd",
        "defaults": {"interval": f"{options.interval_s:g}s", "timeout": "10s", "ttft_timeout": "5s"},
        "prompts": {"short": {"messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 16}},
        "providers": providers,
        "checks": [{"providers": sorted(providers), "prompts": ["short"]}],
        "status_site": {"title": "Crowd test status", "history_days": options.days},
    }
    return config, shown


def seed_history(engine, target_ids, days: int, now: datetime, agents=HISTORY_AGENTS) -> int:
    """`days` of hourly rollups per target from three vantage points, built by the rollup code itself
    (`rollup_row`) from 12 synthetic probes an hour, then the daily tier: an hour down every 17 days
    (all agents), a slow day every 23 (TTFT x2.5), one agent's bad path (its probes fail) every 11."""
    rng = random.Random(7)
    start = hour_floor(now) - timedelta(days=days)
    columns = {rollup_source(m)[0] for m in ALL_ROLLUP_METRICS}
    rows, hour, written = [], start, 0
    while hour < hour_floor(now):
        day = (hour - start).days
        outage = day % 17 == 5 and hour.hour == 14
        slow = 2.5 if day % 23 == 9 else 1.0
        for target in target_ids:
            for a, agent in enumerate(agents):
                probes = []
                for _ in range(12):
                    own_path = a == 0 and day % 11 == 3 and hour.hour < 6  # never public: one agent's
                    ok = not outage and not own_path and rng.random() > 0.0005
                    values = {c: None for c in columns}
                    if ok:
                        values.update(ttft_ms=slow * rng.lognormvariate(5.0, 0.2), ttft_answer_ms=None,
                                      total_ms=rng.lognormvariate(5.6, 0.2), tps=rng.lognormvariate(4.5, 0.1))  # fmt: skip
                    probes.append(SimpleNamespace(ok=ok, error_kind=None if ok else "server_error", input_tokens=8,
                                                  output_tokens=8, cost_usd=None, cache_state=None, cache_hit=None,
                                                  cache_read_tokens=None, cache_write_tokens=None, **values))  # fmt: skip
                rows.append(rollup_row((target, hour, agent), probes, now))
        if len(rows) >= 5000:
            written += _insert(engine, rows)
            rows = []
        hour += HOUR
    written += _insert(engine, rows)
    rollup_days(engine, start, now, now=now)
    return written


def _insert(engine, rows: list[dict]) -> int:
    if rows:
        with engine.begin() as conn:
            conn.execute(insert(RollupHourly), rows)
    return len(rows)


Fetch = Callable[[str | None], Awaitable[tuple[int | None, str | None]]]


def httpx_fetch(http: httpx.AsyncClient, url: str) -> Fetch:
    async def fetch(etag: str | None) -> tuple[int | None, str | None]:
        headers = {"Accept-Encoding": "gzip", **({"If-None-Match": etag} if etag else {})}
        try:
            response = await http.get(url, headers=headers)
            await response.aread()
        except httpx.HTTPError:
            return None, etag
        return response.status_code, response.headers.get("etag") or etag

    return fetch


def stream_fetch(host: str, port: int, path: str) -> Fetch:
    """A GET on a connection of its own, as a browser's first request: asyncio streams, a few
    microseconds of client CPU (httpx's ~2 ms a request made the client, not the server, the
    bottleneck of 500 at once on two cores)."""

    async def fetch(etag: str | None) -> tuple[int | None, str | None]:
        conditional = f"If-None-Match: {etag}\r\n" if etag else ""
        request = (
            f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept-Encoding: gzip\r\n{conditional}Connection: close\r\n\r\n"
        )
        try:
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(request.encode())
            await writer.drain()
            answer = await reader.read()
            writer.close()
        except OSError:
            return None, etag
        head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
        status = int(head[0].split()[1]) if head and len(head[0].split()) > 1 else None
        tags = [line.split(":", 1)[1].strip() for line in head[1:] if line.lower().startswith("etag:")]
        return status, tags[0] if tags else etag

    return fetch


async def crowd(url: str, options: Options, result: Result) -> None:
    deadline = time.perf_counter() + options.seconds
    rng = random.Random(11)

    async def timed(fetch: Fetch, etag: str | None, into: list[float]) -> str | None:
        t0 = time.perf_counter()
        status, etag = await fetch(etag)
        into.append(1000 * (time.perf_counter() - t0))
        result.answers[str(status)] = result.answers.get(str(status), 0) + 1
        return etag

    async def client(fetch: Fetch, arrival_s: float) -> None:
        await asyncio.sleep(arrival_s)
        etag = await timed(fetch, None, result.burst_ms)
        while True:
            await asyncio.sleep(rng.uniform(0, 2 * options.think_s))
            if time.perf_counter() >= deadline:
                return
            etag = await timed(fetch, etag, result.reload_ms)

    parts = urlsplit(url)
    if options.client == "httpx":
        limits = httpx.Limits(max_connections=options.clients, max_keepalive_connections=0)
        async with httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(30.0)) as http:
            fetch = httpx_fetch(http, url)
            await asyncio.gather(*(client(fetch, rng.uniform(0, 1.0)) for _ in range(options.clients)))
        return
    fetch = stream_fetch(parts.hostname, parts.port, parts.path)
    await asyncio.gather(*(client(fetch, rng.uniform(0, 1.0)) for _ in range(options.clients)))


def run(options: Options) -> Result:
    result = Result(options)
    with tempfile.TemporaryDirectory(prefix="firsttoken-crowd-") as tmp:
        work = Path(tmp)
        with (
            scratch_database(options.database, work, "crowd") as (database, _),
            SimulatorProcess(truth_log=work / "truth.jsonl") as sim,
        ):
            _run(options, result, work, sim, database)
    return result


def _run(options: Options, result: Result, work: Path, sim, database: str) -> None:
    config, shown = build_config(sim.base_url, options, database)
    path = work / "firsttoken.yaml"
    path.write_text(json.dumps(config))
    subprocess.run([*FIRSTTOKEN, "db", "upgrade", "--config", str(path)], check=True, capture_output=True)
    engine = make_engine(database)
    seed_history(engine, [f"{p}/{m}@{r}:short" for p, m, r in shown], options.days, datetime.now(UTC))
    port = free_port()
    log = open(work / "service.log", "w")  # noqa: SIM115  (closed below)
    proc = subprocess.Popen([*FIRSTTOKEN, "run", "--config", str(path), "--listen", f"127.0.0.1:{port}"],
                            cwd=work, stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(base + "/healthz", timeout=2).status_code in (200, 503):
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"firsttoken run did not start: {(work / 'service.log').read_text()[-2000:]}")
            time.sleep(0.3)
        time.sleep(options.warmup_s)  # imports, the first renders, every target probed a few times
        page = httpx.get(base + "/status", headers={"Accept-Encoding": "identity"}, timeout=30)
        page.raise_for_status()
        result.page_bytes = len(page.content)
        zipped = httpx.get(base + "/status", headers={"Accept-Encoding": "gzip"}, timeout=30)
        result.page_gzip_bytes = int(zipped.headers["content-length"])
        quiet = (datetime.now(UTC), None)
        time.sleep(options.seconds)
        quiet = (quiet[0], datetime.now(UTC))
        with httpx.Client(timeout=30) as client:  # one client alone, between the phases
            for _ in range(50):
                t0 = time.perf_counter()
                client.get(base + "/status", headers={"Accept-Encoding": "gzip"}).raise_for_status()
                result.alone_ms.append(1000 * (time.perf_counter() - t0))
                time.sleep(0.05)
        crowd_start = datetime.now(UTC)
        asyncio.run(crowd(base + "/status", options, result))
        crowd_end = datetime.now(UTC)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
    truth = [json.loads(line) for line in (work / "truth.jsonl").read_text().splitlines() if line]
    true_ttft = {t["request_id"]: (t["first_token_ns"] - t["arrival_ns"]) / 1e6 for t in truth if t["first_token_ns"]}
    c = SampleRow.__table__.c
    with engine.connect() as conn:
        rows = conn.execute(select(c.request_id, c.ttft_ms, c.started_at).where(c.ok, c.ttft_ms.is_not(None))).all()
    engine.dispose()
    for r in rows:
        if r.request_id not in true_ttft:
            continue
        overhead = r.ttft_ms - true_ttft[r.request_id]
        if quiet[0] <= r.started_at < quiet[1]:
            result.overhead_quiet_ms.append(overhead)
        elif crowd_start <= r.started_at < crowd_end:
            result.overhead_crowd_ms.append(overhead)


def row(name: str, values: list[float], extra: str = "") -> str:
    return f"| {name} | {len(values):,} | {pct(values, 50):.1f} | {pct(values, 99):.1f} | {max(values or [0]):.1f} | {extra} |"


def table(result: Result) -> str:
    o = result.options
    lines = [
        f"{o.targets} targets at {o.interval_s:g} s on {o.database}, {o.days} days of history; "
        f"/status {result.page_bytes:,} B ({result.page_gzip_bytes:,} B gzipped); "
        f"{o.clients} clients ({o.client}) for {o.seconds:g} s, think time mean {o.think_s:g} s; "
        f"answers {result.answers}",
        "",
        "| what | n | p50 ms | p99 ms | max ms | |",
        "| --- | --- | --- | --- | --- | --- |",
        row("GET /status, one client alone", result.alone_ms),
        row(f"GET /status, {o.clients} clients arriving within 1 s (first loads)", result.burst_ms),
        row(f"GET /status, {o.clients} clients reloading (If-None-Match)", result.reload_ms),
        row("probe TTFT overhead vs truth, no crowd", result.overhead_quiet_ms),
        row("probe TTFT overhead vs truth, during the crowd", result.overhead_crowd_ms),
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--think", type=float, default=2.0, help="mean think time between a client's loads, s")
    parser.add_argument("--targets", type=int, default=8)
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--warmup", type=float, default=20.0)
    parser.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--client", choices=("streams", "httpx"), default="streams",
                        help="the crowd's HTTP client: asyncio streams (default) or httpx.AsyncClient")  # fmt: skip
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    options = Options(args.clients, args.seconds, args.think, args.targets, args.interval, args.days, args.warmup,
                      args.database, args.client)  # fmt: skip
    result = run(options)
    if args.json:
        print(json.dumps({**asdict(result), "options": asdict(options)}))
    else:
        print(table(result))


if __name__ == "__main__":
    main()
