"""`firsttoken backtest --csv` with an `agent` column: per vantage point, with the quorum (DESIGN §11).

The issue's reproduction: agent b's own path 2.5x slower for two hours while
agent a and the provider are fine paged the provider's target when the two
agents' samples were pooled. Replayed per vantage point it pages nothing and
names b; a provider shift seen from both is the target's, `dominant: provider`.
"""

from __future__ import annotations

import json
from pathlib import Path

from monitor.cli import main

from .vantage_scenarios import between, probes

M0 = "p/m0@r1:short"
HOURS = 8.0


def write_csv(path: Path, samples) -> Path:
    """As `firsttoken samples --csv` would: interleaved agents, oldest first."""
    lines = ["started_at,target,agent,ttft_ms,ttfb_ms"]
    for s in sorted(samples, key=lambda s: s.started_at):
        lines.append(f"{s.started_at.isoformat()},{s.target},{s.agent},{s.ttft_ms:.1f},{s.ttfb_ms:.1f}")
    path.write_text("\n".join(lines) + "\n")
    return path


def backtest_json(csv_path: Path, capsys) -> list[dict]:
    assert main(["backtest", "--csv", str(csv_path), "--json"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]


def test_one_agents_slow_path_is_a_vantage_alarm_not_the_targets(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # built-in rule: a 50% ttft_ms regression
    slow_b = between(3.0, 5.0, 1.5 * 620.0, 0.0)
    path = write_csv(tmp_path / "s.csv", probes(M0, "a", HOURS) + probes(M0, "b", HOURS, path_extra=slow_b))
    alarms = backtest_json(path, capsys)
    assert [a for a in alarms if a["scope"] == "target"] == []
    (vantage,) = alarms
    assert vantage["agent"] == "b" and vantage["agents"] == ["b"] and vantage["agents_clear"] == ["a"]
    assert vantage["attribution"]["dominant"] == "network"


def test_a_provider_shift_from_both_agents_is_the_targets_and_says_provider(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    twice = between(4.0, 6.0, 2.0, 1.0)
    path = write_csv(
        tmp_path / "s.csv",
        probes(M0, "a", HOURS, provider_factor=twice) + probes(M0, "b", HOURS, provider_factor=twice),
    )
    alarms = backtest_json(path, capsys)
    (target,) = [a for a in alarms if a["scope"] == "target"]
    assert sorted(target["agents"]) == ["a", "b"] and target["attribution"]["dominant"] == "provider"
    assert target["timestamp"] < "2025-06-01T16:10"  # the shift began at 16:00: within the usual delay
    assert main(["backtest", "--csv", str(path)]) == 0
    table = capsys.readouterr().out
    assert "seen from" in table and "a,b" in table and "provider" in table


def test_a_far_agent_joining_pages_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    from datetime import timedelta

    from .helpers import T0

    far = [s for s in probes(M0, "far", HOURS) if s.started_at >= T0 + timedelta(hours=4)]
    path = write_csv(tmp_path / "s.csv", probes(M0, "a", HOURS) + probes(M0, "b", HOURS) + far)
    assert backtest_json(path, capsys) == []
