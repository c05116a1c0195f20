"""`firsttoken run` as a real subprocess for the fault suite: its config, its
endpoints, its resources (via psutil) and its log.

The service's output goes to a file, never a pipe: a pipe nobody reads fills
up after 64 KB and the service would block on its own logging mid-test.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil
from sqlalchemy import select

from monitor.childproc import child_env
from monitor.storage.db import make_engine
from monitor.storage.models import SampleRow
from tests.conftest import BASE_PATH
from tests.net import free_port

FIRSTTOKEN = [sys.executable, "-m", "monitor"]
# What an unhandled exception leaves in a log; the service must log none of them.
RECORD_START = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR|CRITICAL) ")
CRASH_MARKERS = ("Traceback", "Exception", "Error in ", "exception was never retrieved", "was destroyed but")


def wait_for(predicate: Callable[[], Any], timeout_s: float, what: str, interval_s: float = 0.2) -> Any:
    """Poll until `predicate()` is truthy; its value. Fails the test naming `what`."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:g}s waiting for {what}")
        time.sleep(interval_s)


def sim_provider(
    simulator, models: list[str], *, protocol: str = "openai-chat", region: str = "local", **extra: Any
) -> dict:
    """A provider block pointing at the simulator (a region prefix keeps routes apart)."""
    base = simulator.base_url + (f"/region/{region}" if region != "local" else "") + BASE_PATH[protocol]
    return {"protocol": protocol, "regions": {region: base}, "models": models, **extra}


def write_config(
    path: Path,
    *,
    database: str,
    providers: dict[str, dict],
    interval: str = "1s",
    timeout: str = "5s",
    ttft_timeout: str = "3s",
    agent: str = "faults",
    extra: dict | None = None,
    defaults: dict | None = None,
) -> Path:
    config = {
        "database": database,
        "agent": agent,
        "defaults": {"interval": interval, "timeout": timeout, "ttft_timeout": ttft_timeout, **(defaults or {})},
        "providers": providers,
        "prompts": {"short": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 16}},
        "checks": [{"providers": sorted(providers), "prompts": ["short"]}],
        **(extra or {}),
    }
    path.write_text(json.dumps(config, indent=1))  # JSON is YAML
    return path


def cli(
    *args: str, cwd: Path | None = None, env: dict | None = None, timeout_s: float = 60
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*FIRSTTOKEN, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env={**os.environ, **(env or {})},
    )


def migrate_cli(config: Path, env: dict | None = None) -> None:
    result = cli("db", "upgrade", "--config", str(config), env=env)
    assert result.returncode == 0, result.stderr


@dataclass(frozen=True)
class Resources:
    rss_bytes: int
    fds: int
    tcp_sockets: int
    threads: int


class ServiceProcess:
    """`firsttoken run --listen 127.0.0.1:<free port>`; stopped with SIGTERM."""

    def __init__(
        self,
        config: Path,
        workdir: Path,
        *,
        args: tuple[str, ...] = (),
        env: dict | None = None,
        start_timeout_s: float = 30,
    ) -> None:
        self.port = free_port()
        self.log_path = workdir / f"service-{self.port}.log"
        self._log = open(self.log_path, "w")  # noqa: SIM115  (closed in stop)
        self.proc = subprocess.Popen(
            [*FIRSTTOKEN, "run", "--config", str(config), "--listen", f"127.0.0.1:{self.port}", *args],
            cwd=workdir,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            # child_env: a test runner killed mid-test leaves no agent running (monitor.childproc)
            env=child_env({**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}),
        )
        self.ps = psutil.Process(self.proc.pid)
        wait_for(lambda: self.health() is not None or self.proc.poll() is not None, start_timeout_s, "/healthz")
        assert self.proc.poll() is None, self.log()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def health(self, timeout_s: float = 2.0) -> dict | None:
        """The /healthz document (200 or 503), None if it does not answer."""
        try:
            return httpx.get(self.url("/healthz"), timeout=timeout_s).json()
        except (httpx.HTTPError, ValueError):
            return None

    def metrics(self, timeout_s: float = 2.0) -> str:
        response = httpx.get(self.url("/metrics"), timeout=timeout_s)
        response.raise_for_status()
        return response.text

    def resources(self) -> Resources:
        with self.ps.oneshot():
            return Resources(
                rss_bytes=self.ps.memory_info().rss,
                fds=self.ps.num_fds(),
                tcp_sockets=len(self.ps.net_connections(kind="tcp")),
                threads=self.ps.num_threads(),
            )

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, timeout_s: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        return self.proc.returncode

    def log(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors="replace")

    def crash_lines(self) -> list[str]:
        """Log lines that betray an unhandled exception, or that continue a record
        over several lines (a traceback, a multi-line error text): one record, one line."""
        return [
            line
            for line in self.log().splitlines()
            if any(m in line for m in CRASH_MARKERS) or not RECORD_START.match(line)
        ]

    def __enter__(self) -> ServiceProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def stored_samples(database: str) -> list[dict]:
    """Every stored sample's bookkeeping fields, oldest first."""
    engine = make_engine(database)
    c = SampleRow.__table__.c
    query = select(c.id, c.request_id, c.target, c.ok, c.error_kind, c.error_message, c.sched_lag_ms, c.started_at)
    try:
        with engine.connect() as conn:
            return [dict(r) for r in conn.execute(query.order_by(c.started_at)).mappings()]
    except Exception:  # not migrated yet, or the database is away: nothing readable
        return []
    finally:
        engine.dispose()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]
