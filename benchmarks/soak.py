"""Soak: one `firsttoken run` against the simulator, many targets, faults mixed in.

    .venv/bin/python -m benchmarks.soak [--targets 1000] [--minutes 30] [--interval 60]
        [--fault-share 0.1] [--database sqlite|postgres] [--db-outage 120] [--json]

Every target is probed once per interval (1,000 at 1 minute: ~17 probes a
second, spread by the scheduler), across seven protocols, ten providers and
four regions; `--fault-share` of the models misbehave (hangs, resets,
truncation, malformed and oversized streams, 429 storms, HTML pages, error
events after 200, slow headers, one-byte-a-second trickles). With Postgres,
`--db-outage S` takes the database away for S seconds in the middle.

It reports, against the simulator's own log of every request it served:
samples the schedule called for vs stored, samples lost (served but not
stored) and duplicated, probes late by more than 1 s, RSS and open file
descriptors at start, peak and end, and how /metrics and /healthz answered
(polled every few seconds throughout), and the probe's measurement overhead:
stored TTFT minus the simulator's true TTFT of the same request.
`tests/faults/test_soak.py` runs a 3-minute version of this very code.

Agent capacity (DESIGN §7: 5,000 targets at 1-minute intervals on 2 cores,
sched_lag p99 < 1 s, overhead p50 <= 1 ms and p99 <= 5 ms) is this script
without faults: `--targets 5000 --fault-share 0 --minutes 10`. The agent
chooses its probe workers (`--probe-workers` overrides, 1 = one process); the
simulator runs in one process per 2,500 targets (`--simulators`), so the
simulator's own loop does not stamp its truth late; RSS and fds are the
agent's and its workers' together.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import psutil
import psycopg
from sqlalchemy import select

from monitor.agent.scheduler import phase_offset_s
from monitor.simulator.testing import SimulatorProcess
from monitor.simulator.wire import base_path
from monitor.storage.db import make_engine
from monitor.storage.models import SampleRow

FIRSTTOKEN = [sys.executable, "-m", "monitor"]
PROTOCOLS = ["openai-chat", "anthropic", "gemini", "openai-responses", "ollama", "azure-openai", "bedrock-converse"]
PROVIDERS, REGIONS = 10, 4
# The faults a soak mixes in, with what they hold: a slot for the ttft_timeout
# (hang, trickle), 10 MB (huge_line), or nothing much (the rest).
FAULTS = [
    "fault=rate_limited:fault_p=0.8",  # a 429 storm
    "errors=0.5",  # random 429/500/503
    "fault=server_error",
    "fault=overloaded",
    "fault=hang",
    "fault=slow_headers:delay=3000",
    "fault=reset",
    "fault=truncate",
    "fault=malformed",
    "fault=stream_error",
    "fault=throttle_stream",
    "fault=empty",
    "fault=invalid_utf8",
    "fault=html",
    "fault=html_502",
    "fault=trickle",
    "fault=huge_line",
    "fault=echo_key",
]
CRASH = re.compile(r"Traceback|exception was never retrieved|was destroyed but it is pending")
RECORD_START = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [A-Z]+ ")
PG_ADMIN = dict(host="127.0.0.1", port=5432, user="postgres", dbname="postgres", autocommit=True)


@dataclass
class SoakOptions:
    targets: int = 1000
    minutes: float = 30.0
    interval_s: float = 60.0
    fault_share: float = 0.1
    database: str = "sqlite"  # or "postgres" (a throwaway database on 127.0.0.1:5432)
    db_outage_s: float = 0.0  # postgres only: taken away this long, in the middle
    poll_s: float = 5.0
    workdir: str | None = None
    verbose: bool = True
    probe_workers: int | None = None  # None: the agent chooses (monitor/agent/workers.py)
    simulators: int | None = None  # simulator processes; None: one per 2,500 targets, up to the CPUs
    max_concurrency: int | None = None  # None: the agent's default caps
    max_per_provider_region: int | None = None
    # Probes lasting 0.6-2.6 s (TTFT 0.3-1.2 s, then 20-93 tokens at 15 ms), as real flagship models
    # answer a short prompt, instead of the default 0.1-1.1 s.
    flagship: bool = False


@dataclass
class SoakResult:
    targets: int
    minutes: float
    samples_expected: int = 0  # grid times of every target inside the run
    samples_stored: int = 0
    served: int = 0  # requests the simulator finished
    lost: int = 0  # served, never stored (cancelled-at-shutdown probes excepted)
    duplicates: int = 0
    cancelled: int = 0
    errors_by_kind: dict = field(default_factory=dict)
    late_over_1s: int = 0
    lag_p50_ms: float = 0.0
    lag_p99_ms: float = 0.0
    # measured TTFT minus the simulator's true TTFT, over ok samples (DESIGN §7 agent capacity)
    overhead_n: int = 0
    overhead_p50_ms: float = 0.0
    overhead_p99_ms: float = 0.0
    rss_start_mb: float = 0.0
    rss_peak_mb: float = 0.0
    rss_end_mb: float = 0.0
    fds_start: int = 0
    fds_peak: int = 0
    fds_end: int = 0
    polls: int = 0
    poll_failures: int = 0
    healthz_max_ms: float = 0.0
    metrics_max_ms: float = 0.0
    metrics_ms: list = field(default_factory=list)  # every /metrics answer, whole body, ms
    metrics_bytes: int = 0  # the newest /metrics body, uncompressed
    metrics_wire_bytes: int = 0  # the same as sent (gzip: the scraper asks, as Prometheus does)
    unhealthy_polls: int = 0
    slow_polls: list = field(default_factory=list)  # (minute, path, ms) of answers over 250 ms
    spool_peak_bytes: int = 0
    dropped_samples: int = 0
    pages: int = 0  # webhook deliveries accepted
    duplicate_pages: int = 0  # a delivery accepted more than once
    crash_lines: int = 0
    exit_code: int | None = None
    log_path: str = ""


def say(options: SoakOptions, text: str) -> None:
    if options.verbose:
        print(f"[soak {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def _model(m: int, per_route: int, flagship: bool) -> str:
    """The m-th model of a provider region (a distinct name per model: output_tokens differs)."""
    if not flagship:
        return f"sim:ttft={80 + 7 * m}:itl=4:tokens={12 + m % 20}:jitter=0.2:output_tokens={12 + m}"
    share = m / max(1, per_route - 1)
    ttft, tokens = round(300 + 900 * share), round(20 + 73 * share)
    return f"sim:ttft={ttft}:itl=15:tokens={tokens}:jitter=0.2"


def build_config(
    sim_urls: str | list[str], options: SoakOptions, database: str, pages_url: str
) -> tuple[dict, list[str]]:
    """PROVIDERS × REGIONS × models ≥ targets; returns the config and its target ids.

    With several simulators, provider p is served by simulator p mod their number: one simulator
    loop serving 5,000 targets' streams is busy often enough to stamp its own truth late.
    """
    sim_urls = [sim_urls] if isinstance(sim_urls, str) else sim_urls
    per_route = math.ceil(options.targets / (PROVIDERS * REGIONS))
    faulty = math.ceil(per_route * options.fault_share)
    providers, ids = {}, []
    for p in range(PROVIDERS):
        protocol = PROTOCOLS[p % len(PROTOCOLS)]
        models = []
        for m in range(per_route):
            tail = f":{FAULTS[(p * per_route + m) % len(FAULTS)]}" if m < faulty else ""
            models.append(f"{_model(m, per_route, options.flagship)}{tail}")
        sim_url = sim_urls[p % len(sim_urls)]
        regions = {f"r{r}": f"{sim_url}/region/r{r}{base_path(protocol)}" for r in range(REGIONS)}
        name = f"p{p:02d}"
        providers[name] = {"protocol": protocol, "api_key": "soak-key-0123456789", "regions": regions, "models": models}
        ids += [f"{name}/{model}@{region}:short" for region in regions for model in models]
    config = {
        "database": database,
        "agent": "soak",
        "defaults": {
            "interval": f"{options.interval_s:g}s",
            "timeout": "20s",
            "ttft_timeout": "10s",
            **({"max_concurrency": options.max_concurrency} if options.max_concurrency else {}),
            **({"max_per_provider_region": options.max_per_provider_region} if options.max_per_provider_region else {}),
        },
        "prompts": {
            "short": {"messages": [{"role": "user", "content": "Explain TTFT in one sentence."}], "max_tokens": 64}
        },
        "providers": providers,
        "checks": [{"providers": sorted(providers), "prompts": ["short"]}],
        # The faulty targets page; the outage in the middle must not make them page twice.
        "alerts": [
            {
                "name": "errors",
                "metric": "error_rate",
                "kind": "threshold",
                "above": "50%",
                "window": "5m",
                "min_samples": 2,  # pages within the 3-minute test's run too
                "severity": "page",
            },
        ],
        "notifiers": [{"name": "pages", "type": "webhook", "url": pages_url}],
    }
    return config, sorted(ids)


def expected_runs(ids: list[str], interval_s: float, start_s: float, stop_s: float) -> int:
    """Grid times (the scheduler's stable phase per target) inside [start, stop)."""
    total = 0
    for target in ids:
        offset = phase_offset_s(target, interval_s)
        first = math.ceil((start_s - offset) / interval_s)
        last = math.ceil((stop_s - offset) / interval_s)  # exclusive
        total += max(0, last - first)
    return total


class PageReceiver:
    """The soak's webhook: counts pages, and repeats of one delivery (a duplicate page)."""

    def __init__(self) -> None:
        self.deliveries: Counter = Counter()  # X-Firsttoken-Delivery -> times accepted
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.deliveries[self.headers.get("X-Firsttoken-Delivery")] += 1
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/page"
        threading.Thread(target=self.server.serve_forever, args=(0.1,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def set_allow_connections(name: str, allow: bool) -> None:
    with psycopg.connect(**PG_ADMIN) as conn:
        conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS {"true" if allow else "false"}')
        if not allow:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                (name,),
            )


def _family(ps: psutil.Process) -> list[psutil.Process]:
    """The agent and its probe workers (their RSS and fds are the agent's too)."""
    try:
        return [ps, *ps.children(recursive=True)]
    except psutil.Error:
        return [ps]


def rss_mb(ps: psutil.Process) -> float:
    return sum(_safe(lambda p=p: p.memory_info().rss, 0) for p in _family(ps)) / 2**20


def fds(ps: psutil.Process) -> int:
    return sum(_safe(p.num_fds, 0) for p in _family(ps))


def _safe(fn, default):
    try:
        return fn()
    except psutil.Error:
        return default


def log_time(line: str) -> float:
    """Epoch seconds of a log line (asctime is local time)."""
    return datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))] if ordered else float("nan")


def timed_scrape(url: str) -> tuple[int | None, float, int, int]:
    """/metrics as Prometheus asks for it (gzip): (status, ms, bytes uncompressed, bytes on the wire).
    The body is read and dropped as it streams (see timed_get)."""
    started = time.perf_counter()
    try:
        with httpx.stream("GET", url, timeout=5, headers={"Accept-Encoding": "gzip"}) as response:
            body_bytes = 0
            for chunk in response.iter_bytes(1 << 20):
                body_bytes += len(chunk)
            return (
                response.status_code,
                (time.perf_counter() - started) * 1000,
                body_bytes,
                response.num_bytes_downloaded,
            )
    except httpx.HTTPError:
        return None, (time.perf_counter() - started) * 1000, 0, 0


def timed_get(url: str, keep_body: bool = True) -> tuple[int | None, float, str]:
    """(status, ms until the whole body arrived, body). `keep_body=False` reads the body and drops
    it, as a scraper parsing it as it streams would: decoding 5,000 targets' 76 MB of /metrics into
    one Python string cost this process half a core for half a second a scrape, on the same two
    cores as the agent it measures (a real Prometheus parses in Go, usually on another host)."""
    started = time.perf_counter()
    try:
        with httpx.stream("GET", url, timeout=5) as response:
            if keep_body:
                body = response.read().decode()
            else:
                body = ""
                for _ in response.iter_raw(1 << 20):
                    pass
        return response.status_code, (time.perf_counter() - started) * 1000, body
    except httpx.HTTPError:
        return None, (time.perf_counter() - started) * 1000, ""


@contextlib.contextmanager
def scratch_database(kind: str, work: Path, stem: str) -> Iterator[tuple[str, str | None]]:
    """(URL, PostgreSQL database name or None): a SQLite file in `work`, or with `kind` "postgres" a
    fresh database on 127.0.0.1:5432, dropped afterwards (opened again first: an outage may have
    closed it to connections)."""
    if kind != "postgres":
        yield f"sqlite:///{work / f'{stem}.db'}", None
        return
    name = f"firsttoken_{stem}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(**PG_ADMIN) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}", name
    finally:
        with psycopg.connect(**PG_ADMIN) as conn:
            conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def run_soak(options: SoakOptions) -> SoakResult:
    result = SoakResult(options.targets, options.minutes)
    with tempfile.TemporaryDirectory(prefix="firsttoken-soak-") as tmp:
        work = Path(options.workdir or tmp)
        work.mkdir(parents=True, exist_ok=True)
        count = options.simulators or max(1, min(os.cpu_count() or 1, math.ceil(options.targets / 2500)))
        truth_logs = [work / ("truth.jsonl" if k == 0 else f"truth-{k}.jsonl") for k in range(count)]
        with scratch_database(options.database, work, "soak") as (database, pg_name):
            pages = PageReceiver()
            try:
                with contextlib.ExitStack() as stack:
                    sims = [stack.enter_context(SimulatorProcess(truth_log=log)) for log in truth_logs]
                    ids, start_s, stop_s = _soak(options, result, work, sims, pages, database, pg_name)
            finally:
                pages.close()
            result.pages = sum(pages.deliveries.values())
            result.duplicate_pages = sum(n - 1 for n in pages.deliveries.values())
            _tally(options, result, database, truth_logs, ids, start_s, stop_s)
    return result


def _soak(
    options: SoakOptions, result: SoakResult, work: Path, sims, pages, database: str, pg_name: str | None
) -> tuple[list[str], float, float]:
    """Run the service for the soak; (target ids, scheduling start, SIGTERM time) in epoch seconds."""
    config_tree, ids = build_config([sim.base_url for sim in sims], options, database, pages.url)
    config = work / "firsttoken.yaml"
    config.write_text(json.dumps(config_tree))
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    subprocess.run([*FIRSTTOKEN, "db", "upgrade", "--config", str(config)], check=True, capture_output=True, env=env)
    port = free_port()
    log_path = work / "service.log"
    result.log_path = str(log_path)
    say(options, f"{len(ids)} targets at {options.interval_s:g}s for {options.minutes:g} min on {options.database}")
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [*FIRSTTOKEN, "run", "--config", str(config), "--listen", f"127.0.0.1:{port}",
             "--spool-dir", str(work / "spool"),
             *(["--probe-workers", str(options.probe_workers)] if options.probe_workers else [])],
            cwd=work, stdout=log, stderr=subprocess.STDOUT, env=env,
        )  # fmt: skip
        ps = psutil.Process(proc.pid)
        base = f"http://127.0.0.1:{port}"
        stop_s = time.time()
        try:
            deadline = time.monotonic() + 60
            while timed_get(base + "/healthz")[0] is None:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"firsttoken run did not start: {log_path.read_text()[-2000:]}")
                time.sleep(0.2)
            started = time.monotonic()
            end = started + options.minutes * 60
            # The outage sits in the middle of the run (Postgres only).
            away_from = started + (options.minutes * 60 - options.db_outage_s) / 2
            away_until = away_from + options.db_outage_s
            away = False
            while time.monotonic() < end:
                now = time.monotonic()
                if pg_name and options.db_outage_s and not away and away_from <= now < away_until:
                    say(options, f"database away for {options.db_outage_s:g}s")
                    set_allow_connections(pg_name, False)
                    away = True
                elif away and now >= away_until:
                    set_allow_connections(pg_name, True)
                    away = False
                    say(options, "database back")
                _poll(result, ps, base, (now - started) / 60)
                if result.polls == max(1, round(30 / options.poll_s)):  # imports, lanes and caches have settled
                    result.rss_start_mb, result.fds_start = rss_mb(ps), fds(ps)
                if result.polls % max(1, round(60 / options.poll_s)) == 0:
                    say(options, f"{(now - started) / 60:.1f} min: rss {rss_mb(ps):.0f} MB, "
                                 f"fds {fds(ps)}, spool peak {result.spool_peak_bytes} B")  # fmt: skip
                time.sleep(max(0.0, options.poll_s - (time.monotonic() - now)))
            if away:
                set_allow_connections(pg_name, True)
            # Everything spooled goes in before the stop, so the tally sees it.
            drain_deadline = time.monotonic() + 120
            while time.monotonic() < drain_deadline:
                health = json.loads(timed_get(base + "/healthz")[2] or "{}")
                if health.get("spool_bytes") == 0 and health.get("database_up"):
                    break
                time.sleep(1)
            result.rss_end_mb, result.fds_end = rss_mb(ps), fds(ps)
            result.dropped_samples = json.loads(timed_get(base + "/healthz")[2] or "{}").get("dropped_samples", -1)
        finally:
            stop_s = time.time()
            proc.send_signal(signal.SIGTERM)
            try:
                result.exit_code = proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                result.exit_code = proc.wait()
    # Probe workers each log their own start: the schedule holds once the last of them has started.
    starts = [
        log_time(line) for line in log_path.read_text().splitlines() if "monitor.agent.scheduler: scheduling" in line
    ]
    return ids, max(t for t in starts if t - starts[0] < 60), stop_s


def _poll(result: SoakResult, ps: psutil.Process, base: str, minute: float) -> None:
    """/healthz every poll; /metrics every third, about as often as a Prometheus scrape."""
    result.polls += 1
    for path in ("/healthz", "/metrics") if result.polls % 3 == 1 else ("/healthz",):
        if path == "/metrics":
            status, ms, result.metrics_bytes, result.metrics_wire_bytes = timed_scrape(base + path)
            result.metrics_ms.append(ms)
            body = ""
        else:
            status, ms, body = timed_get(base + path)
        if ms > 250:
            result.slow_polls.append((round(minute, 2), path, round(ms)))
        if status is None or (path == "/metrics" and status != 200):
            result.poll_failures += 1
        if path == "/healthz":
            result.healthz_max_ms = max(result.healthz_max_ms, ms)
            if status == 503:
                result.unhealthy_polls += 1
            if body:
                result.spool_peak_bytes = max(result.spool_peak_bytes, json.loads(body).get("spool_bytes", 0))
        else:
            result.metrics_max_ms = max(result.metrics_max_ms, ms)
    result.rss_peak_mb = max(result.rss_peak_mb, rss_mb(ps))
    result.fds_peak = max(result.fds_peak, fds(ps))


def _tally(
    options: SoakOptions,
    result: SoakResult,
    database: str,
    truth_logs: list[Path],
    ids: list[str],
    start_s: float,
    stop_s: float,
) -> None:
    log = Path(result.log_path).read_text(errors="replace")
    # A traceback, or any record spread over several lines, is a crash sign.
    result.crash_lines = sum(1 for line in log.splitlines() if CRASH.search(line) or not RECORD_START.match(line))
    result.samples_expected = expected_runs(ids, options.interval_s, start_s, stop_s)
    engine = make_engine(database)
    c = SampleRow.__table__.c
    with engine.connect() as conn:
        rows = conn.execute(
            select(c.request_id, c.error_kind, c.sched_lag_ms, c.queue_wait_ms, c.ok, c.ttft_ms, c.started_at, c.target)
        ).all()
    engine.dispose()
    result.samples_stored = len(rows)
    result.cancelled = sum(1 for r in rows if r.error_kind == "cancelled")
    result.errors_by_kind = dict(Counter(r.error_kind or "ok" for r in rows).most_common())
    stored = Counter(r.request_id for r in rows if r.request_id)
    result.duplicates = sum(n - 1 for n in stored.values())
    truth = [json.loads(line) for log in truth_logs for line in log.read_text().splitlines() if line]
    served = {t["request_id"] for t in truth}
    result.served = len(served)
    true_ttft_ms = {
        t["request_id"]: (t["first_token_ns"] - t["arrival_ns"]) / 1e6 for t in truth if t["first_token_ns"] is not None
    }
    measured = [
        (r, r.ttft_ms - true_ttft_ms[r.request_id])
        for r in rows
        if r.ok and r.ttft_ms is not None and r.request_id in true_ttft_ms
    ]
    overheads = [overhead for _, overhead in measured]
    if options.workdir:  # for finding out when the slow ones happened
        with open(Path(options.workdir) / "overheads.csv", "w") as out:
            out.write("started_at,target,ttft_ms,overhead_ms\n")
            out.writelines(f"{r.started_at.isoformat()},{r.target},{r.ttft_ms:.3f},{o:.3f}\n" for r, o in measured)
    result.overhead_n = len(overheads)
    if overheads:
        result.overhead_p50_ms, result.overhead_p99_ms = percentile(overheads, 50), percentile(overheads, 99)
    # A probe cancelled by the shutdown is stored without the request id it was sent with.
    result.lost = max(0, len(served - set(stored)) - result.cancelled)
    # How late a probe started: the scheduler's lag plus any wait for a concurrency cap (recorded apart).
    lags = [r.sched_lag_ms + (r.queue_wait_ms or 0.0) for r in rows if r.sched_lag_ms is not None]
    result.late_over_1s = sum(1 for lag in lags if lag > 1000)
    result.lag_p50_ms, result.lag_p99_ms = percentile(lags, 50), percentile(lags, 99)


def _per_target_scrape(result: SoakResult) -> str:
    n = max(1, result.targets)
    median_ms = percentile(result.metrics_ms, 50) if result.metrics_ms else float("nan")
    return f"{result.metrics_bytes / n:,.0f} B, {result.metrics_wire_bytes / n:,.0f} B, {median_ms:.0f} ms"


def table(result: SoakResult) -> str:
    rows = [
        ("targets × interval", f"{result.targets} × 1 per interval, {result.minutes:g} min"),
        ("samples expected (schedule) / stored", f"{result.samples_expected} / {result.samples_stored}"),
        ("requests served by the simulator", str(result.served)),
        ("samples lost / duplicated", f"{result.lost} / {result.duplicates}"),
        ("cancelled at shutdown", str(result.cancelled)),
        ("probes late by > 1 s", f"{result.late_over_1s} (sched_lag p50 {result.lag_p50_ms:.1f} ms, p99 {result.lag_p99_ms:.1f} ms)"),
        ("TTFT overhead vs truth (ok samples)", f"p50 {result.overhead_p50_ms:.2f} ms, p99 {result.overhead_p99_ms:.2f} ms over {result.overhead_n}"),
        ("RSS start / peak / end", f"{result.rss_start_mb:.0f} / {result.rss_peak_mb:.0f} / {result.rss_end_mb:.0f} MB"),
        ("open fds start / peak / end", f"{result.fds_start} / {result.fds_peak} / {result.fds_end}"),
        ("/healthz polls, failed answers", f"{result.polls} ({result.poll_failures} failed, {result.unhealthy_polls} healthz 503)"),
        ("slowest /healthz, /metrics answer", f"{result.healthz_max_ms:.0f} ms, {result.metrics_max_ms:.0f} ms"),
        ("/metrics per target: bytes, gzip bytes, median scrape", _per_target_scrape(result)),
        ("spool peak / samples dropped", f"{result.spool_peak_bytes} B / {result.dropped_samples}"),
        ("pages delivered / duplicated", f"{result.pages} / {result.duplicate_pages}"),
        ("unhandled exceptions in the log", str(result.crash_lines)),
        ("exit code after SIGTERM", str(result.exit_code)),
        ("outcomes", ", ".join(f"{k} {v}" for k, v in result.errors_by_kind.items())),
    ]  # fmt: skip
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"| {name.ljust(width)} | {value} |" for name, value in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", type=int, default=1000)
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--interval", type=float, default=60.0, help="seconds between probes of one target")
    parser.add_argument("--fault-share", type=float, default=0.1, help="fraction of models that misbehave")
    parser.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--db-outage", type=float, default=0.0, help="seconds the database is away mid-run (postgres)")
    parser.add_argument("--workdir", help="keep the log, truth log and database here")
    parser.add_argument("--json", action="store_true", help="print the result as JSON too")
    parser.add_argument("--probe-workers", type=int, help="firsttoken run --probe-workers (default: its choice)")
    parser.add_argument("--simulators", type=int, help="simulator processes (default: one per 2,500 targets)")
    parser.add_argument("--max-concurrency", type=int, help="defaults.max_concurrency (default: the agent's)")
    parser.add_argument("--max-per-provider-region", type=int, help="defaults.max_per_provider_region")
    parser.add_argument("--flagship", action="store_true", help="probes lasting 0.6-2.6 s, as real flagships'")
    args = parser.parse_args()
    if args.db_outage and args.database != "postgres":
        parser.error("--db-outage needs --database postgres")
    options = SoakOptions(
        targets=args.targets,
        minutes=args.minutes,
        interval_s=args.interval,
        fault_share=args.fault_share,
        database=args.database,
        db_outage_s=args.db_outage,
        workdir=args.workdir,
        probe_workers=args.probe_workers,
        simulators=args.simulators,
        max_concurrency=args.max_concurrency,
        max_per_provider_region=args.max_per_provider_region,
        flagship=args.flagship,
    )
    result = run_soak(options)
    print(f"firsttoken soak on {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d')}")
    print(table(result))
    if args.json:
        print(json.dumps(asdict(result)))


if __name__ == "__main__":
    main()
