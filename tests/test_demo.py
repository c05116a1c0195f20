"""`firsttoken demo` as a user runs it: headless, a short backfill, the dashboard, then Ctrl-C."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from monitor.demo.cast import PROVIDERS
from tests.net import free_port

FIRSTTOKEN = [sys.executable, "-m", "monitor"]
BOOT_TIMEOUT_S = 240.0  # a 3 h backfill and Streamlit's start on a busy 2-core machine
ALL_SIM_SERIES = {
    (p.name, m, r, prompt) for p in PROVIDERS for m in p.models for r in p.regions for prompt in ("short", "rag-4k")
} | {
    (p.name, m, r, "rag-cached")
    for p in PROVIDERS
    for m in p.models
    if m in ("gpt-4o-mini", "claude-sonnet-4-5")
    for r in p.regions
}


class Demo:
    """The demo in a subprocess; both pipes drained by threads so it never blocks on a full pipe."""

    def __init__(self, cwd: Path, *args: str) -> None:
        self.started = datetime.now(UTC)
        env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTTOKEN_")}
        self.proc = subprocess.Popen(
            [*FIRSTTOKEN, "demo", "--no-browser", *args],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**env, "PYTHONUNBUFFERED": "1"},
        )
        self.out: list[str] = []
        self.err: list[str] = []
        for stream, sink in ((self.proc.stdout, self.out), (self.proc.stderr, self.err)):
            threading.Thread(target=lambda s=stream, k=sink: k.extend(iter(s.readline, "")), daemon=True).start()

    def wait_for_line(self, text: str, timeout_s: float) -> str | None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and self.proc.poll() is None:
            for line in list(self.out):
                if text in line:
                    return line
            time.sleep(0.2)
        return None

    def interrupt(self, timeout_s: float) -> tuple[int, float]:
        sent = time.monotonic()
        self.proc.send_signal(signal.SIGINT)
        code = self.proc.wait(timeout_s)
        return code, time.monotonic() - sent

    def text(self) -> str:
        time.sleep(0.3)  # let the reader threads take the last lines
        return "".join(self.out) + "".join(self.err)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def rows(db: Path, query: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(query).fetchall()


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.slow
def test_demo_backfills_alerts_serves_the_dashboard_probes_live_and_stops_on_ctrl_c(tmp_path):
    port = free_port()
    demo = Demo(tmp_path, "--backfill", "3h", "--port", str(port), "--interval", "5s")
    try:
        line = demo.wait_for_line("dashboard on", BOOT_TIMEOUT_S)
        assert line is not None, demo.text()
        assert f"http://localhost:{port}" in line
        assert httpx.get(f"http://127.0.0.1:{port}/_stcore/health", timeout=5).status_code == 200

        db = tmp_path / "firsttoken-demo.db"
        backfilled = rows(db, "SELECT COUNT(*) FROM samples")[0][0]
        deadline = time.monotonic() + 60
        while rows(db, "SELECT COUNT(*) FROM samples")[0][0] < backfilled + 24 and time.monotonic() < deadline:
            time.sleep(1)

        code, took_s = demo.interrupt(timeout_s=20)
        output = demo.text()
        assert code == 0, output
        assert took_s < 10, output
        assert "Traceback" not in output and "ERROR" not in output, output
    finally:
        demo.kill()

    # Every simulated provider, model, region and prompt has history, and live samples came after it.
    series = set(rows(db, "SELECT DISTINCT provider, model, region, prompt FROM samples"))
    assert series == ALL_SIM_SERIES
    history = rows(db, "SELECT MIN(started_at), COUNT(*) FROM samples")[0]
    assert history[1] >= backfilled + 24
    assert (demo.started - at(history[0])).total_seconds() > 2.9 * 3600
    assert rows(db, "SELECT COUNT(*) FROM samples WHERE error_kind = 'rate_limited'")[0][0] > 20

    # Alerts fired and resolved in the history, and were printed by the log notifier as they went.
    done = [
        (rule, at(fired), at(resolved))
        for rule, fired, resolved in rows(
            db, "SELECT rule, fired_at, resolved_at FROM alerts WHERE fired_at IS NOT NULL AND resolved_at IS NOT NULL"
        )
    ]
    in_history = [(rule, fired, resolved) for rule, fired, resolved in done if resolved < demo.started]
    assert {"error-rate", "ttft-regression", "cache-hit-ratio"} <= {rule for rule, _, _ in in_history}, done
    assert "ALERT FIRING" in output and "ALERT RESOLVED" in output
    assert "history ready" in output

    # What a user keeps: the config, readable by the other commands.
    config = tmp_path / "firsttoken-demo" / "firsttoken.yaml"
    check = subprocess.run(
        [*FIRSTTOKEN, "check-config", "--config", str(config)], capture_output=True, text=True, timeout=60
    )
    assert check.returncode == 0, check.stderr


def test_demo_refuses_a_busy_dashboard_port_at_once(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [*FIRSTTOKEN, "demo", "--no-browser", "--port", str(port)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 1
    assert f"port {port} is in use" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "firsttoken-demo.db").exists()


def test_bad_durations_are_usage_errors(tmp_path):
    result = subprocess.run(
        [*FIRSTTOKEN, "demo", "--backfill", "yesterday"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2 and "--backfill" in result.stderr and "Traceback" not in result.stderr
