"""DESIGN §15: `firsttoken backtest --samples` over the demo's backfilled history, with the demo's
config, gives the alerts the live engine wrote — alert for alert (rule or SLO, scope, agent, severity,
fired within one evaluation step). The history holds rule, SLO, vantage, agent-wide, grouped and
inhibited alerts, from two vantage points."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import yaml

FIRSTTOKEN = [sys.executable, "-m", "monitor"]


def run(cwd: Path, *args: str) -> str:
    result = subprocess.run([*FIRSTTOKEN, *args], cwd=cwd, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def moment(text: str) -> datetime:
    at = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def test_backtest_samples_replays_the_demo_history_to_the_round(tmp_path):
    run(tmp_path, "demo", "--backfill-only", "--backfill", "6h", "--seed", "5", "--no-browser")
    config = "firsttoken-demo/firsttoken.yaml"
    step_s = float(yaml.safe_load((tmp_path / config).read_text())["alerting"]["evaluate_every"].rstrip("m")) * 60
    (tmp_path / "samples.csv").write_text(run(tmp_path, "samples", "--config", config, "--since", "7h", "--csv"))
    changes = [json.loads(line) for line in run(tmp_path, "backtest", "--samples", "samples.csv", "--config", config,
                                                "--json").splitlines()]  # fmt: skip

    replayed: dict[tuple, tuple[str, datetime]] = {}  # each announced alert: its last severity, when it fired
    for c in changes:
        if c["change"] != "resolved":
            replayed[(c["rule"], c["scope"], c["agent"], c["fired_at"])] = c["severity"]
    db = sqlite3.connect(tmp_path / "firsttoken-demo.db")
    written = db.execute(
        "SELECT rule, scope_key, agent, severity, fired_at FROM alerts WHERE fired_at IS NOT NULL"
    ).fetchall()
    assert len(written) >= 10 and len(replayed) == len(written)
    assert any(rule.startswith("slo:") for rule, *_ in written)  # the demo's history carries SLO alerts
    assert any(agent for _rule, _scope, agent, *_ in written)  # and vantage alerts
    unmatched = []
    for rule, scope, agent, severity, fired_at in written:
        fired = moment(fired_at)
        match = [
            key for key, sev in replayed.items()
            if key[:3] == (rule, scope, agent) and sev == severity
            and abs((moment(key[3]) - fired).total_seconds()) <= step_s
        ]  # fmt: skip
        if len(match) != 1:
            unmatched.append((rule, scope, agent, severity, fired_at))
    assert unmatched == []
