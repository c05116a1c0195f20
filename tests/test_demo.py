"""`firsttoken demo` as a user runs it: headless, a short backfill, the dashboard, two live vantage
points (the demo's own agent and demo-far, a second `firsttoken run` over a longer path), then Ctrl-C."""

from __future__ import annotations

import os
import re
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from dashboard.agent_rows import agent_rows
from monitor.demo.cast import PROVIDERS
from monitor.demo.far_agent import FAR_LOG
from monitor.demo.vantage import FAR_AGENT, FAR_PATH_MS, far_vantage
from monitor.storage.db import make_engine
from monitor.storage.queries.agents import agent_reach, list_agents
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
        # When the history was written: every sample taken after this is a live one.
        self.live_from: datetime | None = None
        for stream, sink in ((self.proc.stdout, self.out), (self.proc.stderr, self.err)):
            threading.Thread(target=self._drain, args=(stream, sink), daemon=True).start()

    def _drain(self, stream, sink: list[str]) -> None:
        for line in iter(stream.readline, ""):
            if self.live_from is None and "history ready" in line:
                self.live_from = datetime.now(UTC)
            sink.append(line)

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


def live_samples(db: Path, since: datetime) -> list[tuple]:
    """(agent, target, ttfb_ms, ok) of the samples taken after `since`."""
    found = rows(db, "SELECT agent, target, started_at, ttfb_ms, ok FROM samples")
    return [(agent, target, ttfb, ok) for agent, target, started, ttfb, ok in found if at(started) > since]


def far_is_live(db: Path, since: datetime) -> bool:
    """demo-far has stored two live rounds of each of its targets, and the demo's agent its own of them."""
    live = live_samples(db, since)
    far = {t for a, t, *_ in live if a == FAR_AGENT}
    rounds = min((sum(1 for a, t, *_ in live if a == FAR_AGENT and t == x) for x in far), default=0)
    return len(far) == 4 and rounds >= 2 and far <= {t for a, t, *_ in live if a == "demo"}


def far_health_url(log: Path) -> str | None:
    """demo-far's /healthz, from the line its `firsttoken run` logs as it starts."""
    found = re.search(r"/metrics on (http://[\d.]+:\d+)", log.read_text(errors="replace")) if log.exists() else None
    return found and found.group(1) + "/healthz"


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
        # The second vantage point, live: its own `firsttoken run`, started once the demo's agent leads.
        live_from = demo.live_from
        assert live_from is not None, demo.text()
        while not far_is_live(db, live_from) and time.monotonic() < deadline + 30:
            time.sleep(1)
        assert far_is_live(db, live_from), demo.text()
        far_log = tmp_path / "firsttoken-demo" / FAR_LOG
        health_url = far_health_url(far_log)
        assert health_url, far_log.read_text(errors="replace")
        far_health = httpx.get(health_url, timeout=5).json()
        assert far_health["agent"] == FAR_AGENT and far_health["targets"] == 4 and far_health["ok"]
        # One leader for the one database: the demo's own agent; demo-far only probes.
        assert far_health["leader"] is False
        ((holder,),) = rows(db, "SELECT holder FROM leader_lease")
        assert holder.startswith("demo/"), holder
        overview = overview_rows(db)

        code, took_s = demo.interrupt(timeout_s=20)
        output = demo.text()
        assert code == 0, output
        assert took_s < 10, output
        assert "Traceback" not in output and "ERROR" not in output, output
        far_output = far_log.read_text(errors="replace")
        assert "Traceback" not in far_output and " ERROR " not in far_output, far_output[-3000:]
        assert far_output.rstrip().endswith("stopped"), far_output[-3000:]  # stopped cleanly, and before the demo
        with pytest.raises(httpx.HTTPError):
            httpx.get(health_url, timeout=2)
    finally:
        demo.kill()

    # demo-far's live samples carry its path: its time to headers is the demo agent's plus ~120 ms.
    live = [s for s in live_samples(db, live_from) if s[3]]
    for target in {t for a, t, *_ in live if a == FAR_AGENT}:
        near, far = (
            statistics.median(x for a, t, x, _ in live if a == agent and t == target) for agent in ("demo", FAR_AGENT)
        )
        assert FAR_PATH_MS * 0.8 <= far - near <= FAR_PATH_MS + 250, (target, near, far)
    # The Overview lists both vantage points, probing, each reaching both of demo-far's providers.
    (near_row, far_row) = [r for r in overview if r["agent"] in ("demo", FAR_AGENT)]
    assert far_row["agent"] == FAR_AGENT and far_row["status"] == "probing" and near_row["status"] == "probing"
    assert all(float(far_row[p].rstrip("%")) >= 90 for p in ("sim-openai", "sim-anthropic")), far_row
    assert far_row["sim-gemini"] == "—" and near_row["sim-gemini"] != "—"  # demo-far probes two providers only
    # What demo-far alone saw (its congested hour in the history) is a ticket about its path, never a page.
    alerts = rows(db, "SELECT scope_kind, scope_key, agent, severity, fired_at FROM alerts WHERE fired_at IS NOT NULL")
    assert ("agent", FAR_AGENT, "ticket") in {(kind, agent, sev) for kind, _, agent, sev, _ in alerts}, alerts
    # No page about demo-far's path: none scoped to an agent, and none on a target demo-far probes
    # fired while its link was congested (or within the half hour after: a detector's delay). A row's
    # `agents` is its latest evaluation's, so a provider's page whose tail only demo-far still saw may
    # end with ["demo-far"]: that says nothing about why it fired.
    target_ids = [t for (t,) in rows(db, "SELECT DISTINCT scope_key FROM alerts WHERE scope_kind = 'target'")]
    far = far_vantage(target_ids, demo.started.timestamp(), 3 * 3600.0)
    spell = far.spells[0]
    for kind, key, agent, severity, fired in alerts:
        if severity == "page":
            assert agent is None, alerts
            during = spell.start_s - 60 <= at(fired).timestamp() <= spell.end_s + 1800
            assert not (kind == "target" and key in far.target_ids and during), alerts

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


def overview_rows(db: Path) -> list[dict]:
    """The Overview's agent table as the dashboard builds it (dashboard/agent_rows.py)."""
    engine = make_engine(f"sqlite:///{db}")
    try:
        now = datetime.now(UTC)
        od = SimpleNamespace(agents=list_agents(engine), reach=agent_reach(engine, now - timedelta(minutes=15)))
        return agent_rows(od, now)
    finally:
        engine.dispose()


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
