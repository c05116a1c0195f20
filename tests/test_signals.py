"""Every long-running command stops on SIGTERM or SIGINT, to itself or to its whole group, at any moment.

What `docker stop`, systemd and a shell's `kill %1` do: the command runs in a
session of its own and the signal goes to it (os.kill) or to its process
group (os.killpg), as real signals. It must exit within 10 s, leave no child
process behind and keep every sample it had taken.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

from tests.net import free_port

FIRSTTOKEN = [sys.executable, "-m", "monitor"]
EXIT_WITHIN_S = 10.0


class Command:
    """A firsttoken command in its own session (so its group is its own), output to a file."""

    def __init__(self, cwd: Path, *args: str) -> None:
        self.log = cwd / "output.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTTOKEN_")}
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(
                [*FIRSTTOKEN, *args],
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env={**env, "PYTHONUNBUFFERED": "1"},
            )
        self.ps = psutil.Process(self.proc.pid)

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, predicate, timeout_s: float = 90.0):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and self.proc.poll() is None:
            value = predicate()
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"gave up waiting (exit {self.proc.poll()}):\n{self.text()}")

    def signal(self, *signals: signal.Signals, group: bool, gap_s: float = 0.3) -> float:
        """Send each signal (to the process, or to its group); seconds until it exited, children all gone."""
        children = self.ps.children(recursive=True)
        sent = time.monotonic()
        for n, signum in enumerate(signals):
            if n:
                time.sleep(gap_s)
            if self.proc.poll() is None:
                (os.killpg if group else os.kill)(self.proc.pid, signum)
        try:
            self.proc.wait(EXIT_WITHIN_S)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"still running {EXIT_WITHIN_S:g} s after {signals}:\n{self.text()}") from None
        took_s = time.monotonic() - sent
        _gone, alive = psutil.wait_procs(children, timeout=1.0)
        left = [p for p in alive if p.status() != psutil.STATUS_ZOMBIE]
        assert not left, f"children left behind: {left}\n{self.text()}"
        return took_s

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def count(db: Path, where: str = "1=1") -> int:
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return conn.execute(f"SELECT COUNT(*) FROM samples WHERE {where}").fetchone()[0]


def progress_done(text: str) -> int:
    """The latest `done` the demo's progress bar printed (samples handed to the writer by then)."""
    found = re.findall(r"backfilling \[[#.]+\]\s+\d+%\s+(\d+)/\d+", text)
    return int(found[-1]) if found else 0


@pytest.fixture
def demo_args(tmp_path):
    return ["demo", "--no-browser", "--no-dashboard", "--workers", "2", "--db", str(tmp_path / "demo.db")]


def test_demo_stops_on_sigterm_to_its_group_in_the_middle_of_a_backfill(tmp_path, demo_args):
    # What hung in multiprocessing.Pool.terminate: workers killed by the group's signal held its queue lock.
    demo = Command(tmp_path, *demo_args, "--backfill", "24h")
    try:
        done = demo.wait_for(lambda: progress_done(demo.text()) >= 500)
        took_s = demo.signal(signal.SIGTERM, group=True)
    finally:
        demo.kill()
    output = demo.text()
    assert demo.proc.returncode == 0, output
    assert "interrupted" in output and "Traceback" not in output, output
    assert "history ready" not in output, "signalled too late to test a backfill in progress"
    assert count(tmp_path / "demo.db") >= max(done, progress_done(output)), output  # flushed, none lost
    assert took_s < EXIT_WITHIN_S


def test_demo_with_its_dashboard_stops_on_sigterm_to_its_group_while_going_live(tmp_path, demo_args):
    # History written, the live service starting, Streamlit (in a session of its own) still booting.
    args = [a for a in demo_args if a != "--no-dashboard"]
    demo = Command(tmp_path, *args, "--backfill", "1h", "--port", str(free_port()))
    try:
        demo.wait_for(lambda: "history ready" in demo.text())
        dashboard = demo.ps.children()  # the demo stops it itself: it is out of the group's reach
        assert any("streamlit" in " ".join(p.cmdline()) for p in dashboard), dashboard
        demo.signal(signal.SIGTERM, group=True)
    finally:
        demo.kill()
    assert demo.proc.returncode == 0, demo.text()
    assert "Traceback" not in demo.text(), demo.text()
    assert count(tmp_path / "demo.db") >= 1440  # the hour of history: 24 targets every minute


def test_demo_stops_on_sigterm_then_sigint_to_its_group_while_live(tmp_path, demo_args):
    demo = Command(tmp_path, *demo_args, "--backfill", "1h", "--interval", "2s")
    db = tmp_path / "demo.db"
    try:
        demo.wait_for(lambda: "probing live" in demo.text())
        backfilled = count(db)
        demo.wait_for(lambda: count(db) > backfilled + 10)  # live samples are being written
        before = count(db)
        demo.signal(signal.SIGTERM, signal.SIGINT, group=True)
    finally:
        demo.kill()
    output = demo.text()
    assert demo.proc.returncode == 0, output
    assert "Traceback" not in output, output
    assert count(db) >= before


@pytest.mark.parametrize("workers", ["1", "2"], ids=["one-process", "probe-workers"])
def test_run_stops_on_sigint_to_its_group_with_a_slow_probe_in_flight(tmp_path, simulator, workers):
    db = tmp_path / "run.db"
    config = tmp_path / "firsttoken.yaml"
    slow, fast = "sim:ttft=15000:itl=2:tokens=5:jitter=0", "sim:ttft=10:itl=1:tokens=3:jitter=0"
    config.write_text(
        json.dumps(
            {
                "database": f"sqlite:///{db}",
                "agent": "signals",
                "defaults": {"interval": "1s", "timeout": "30s", "ttft_timeout": "20s"},
                "providers": {
                    "sim": {
                        "protocol": "openai-chat",
                        "api_key": "sk-signal-test",
                        "regions": {"local": simulator.base_url + "/v1"},
                        "models": [slow, fast],
                    }
                },
                "prompts": {"short": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}},
                "checks": [{"providers": ["sim"], "prompts": ["short"]}],
            }
        )
    )
    subprocess.run([*FIRSTTOKEN, "db", "upgrade", "--config", str(config)], check=True, capture_output=True)
    port = free_port()
    run = Command(tmp_path, "run", "--config", str(config), "--listen", f"127.0.0.1:{port}", "--probe-workers", workers)

    def health() -> dict:
        try:
            return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).json()
        except (httpx.HTTPError, ValueError):
            return {}

    try:
        run.wait_for(lambda: health().get("in_flight", 0) >= 1 and count(db) >= 3)
        probes = sum(
            float(line.rsplit(" ", 1)[1])
            for line in httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=2).text.splitlines()
            if line.startswith("firsttoken_probes_total{")
        )
        took_s = run.signal(signal.SIGINT, group=True)
    finally:
        run.kill()
    output = run.text()
    assert run.proc.returncode == 0, output
    assert took_s < EXIT_WITHIN_S, output
    # Everything /metrics had counted is stored, and the slow probe cut short is recorded, not lost.
    assert count(db) >= probes > 0
    assert count(db, f"target = 'sim/{slow}@local:short' AND error_kind = 'cancelled'") == 1


@pytest.mark.parametrize(
    ("command", "signum", "group"),
    [("simulate", signal.SIGINT, False), ("dashboard", signal.SIGTERM, True), ("dashboard", signal.SIGINT, False)],
)
def test_simulator_and_dashboard_stop_on_a_signal(tmp_path, command, signum, group):
    args = ["--port", str(free_port())] + (["--no-browser"] if command == "dashboard" else [])
    proc = Command(tmp_path, command, *args)
    try:
        if command == "simulate":
            proc.wait_for(lambda: "listening on" in proc.text())
        else:
            proc.wait_for(lambda: proc.ps.children(recursive=True))  # Streamlit is booting
            time.sleep(1.0)
        proc.signal(signum, group=group)
    finally:
        proc.kill()
    assert proc.proc.returncode == 0, proc.text()


def test_dashboard_killed_outright_leaves_no_streamlit_behind(tmp_path):
    """SIGKILL runs no handler: the kernel ends Streamlit with its parent (monitor.childproc)."""
    proc = Command(tmp_path, "dashboard", "--port", str(free_port()), "--no-browser")
    try:
        (streamlit,) = proc.wait_for(lambda: proc.ps.children(recursive=True))
        time.sleep(1.0)
        os.kill(proc.proc.pid, signal.SIGKILL)  # the process alone, not its group
        proc.proc.wait(5)
        _gone, alive = psutil.wait_procs([streamlit], timeout=5)
        assert not [p for p in alive if p.status() != psutil.STATUS_ZOMBIE], "Streamlit outlived its parent"
    finally:
        proc.kill()
