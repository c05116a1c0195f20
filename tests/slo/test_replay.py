"""SLO burn-rate replay (DESIGN §12): firing times equal the workbook's formulas with count-based
windows, to the sample; budgets are exact. The oracle is `series.expected_events`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from monitor.alerts.slo_backtest import read_probes, replay
from monitor.cli import main
from monitor.config import load_config_text
from tests.slo.series import DAY_S, bad_of, expected_events, fail, fail_every, series, slow

OBJECTIVE = 0.995
CONFIG = """
providers:
  sim: {protocol: openai-chat, regions: {local: "http://127.0.0.1:9/v1"}, models: [m]}
prompts:
  short: {messages: [{role: user, content: hi}], max_tokens: 8}
checks: [{providers: [sim], prompts: [short]}]
slos:
  - name: chat
    objective: 99.5%
    good: {ttft_ms: {below: 1500ms}}
    period: 30d
  - name: answers
    objective: 99.5%
    period: 30d
"""


def slo(name: str = "chat"):
    return next(s for s in load_config_text(CONFIG).slos if s.name == name)


def run_replay(s, name="chat"):
    probes = read_probes([line.split(",") for line in s.csv().strip().splitlines()])
    return replay(slo(name), probes)


def got_events(result) -> list[tuple[int, str, str]]:
    return [(e.index, e.event, e.severity) for e in result.events]


def check(s, name="chat", bound=1500.0):
    result = run_replay(s, name)
    bad = bad_of(s, bound)
    assert got_events(result) == expected_events(s, bad, 30 * DAY_S, OBJECTIVE)
    n, n_bad = len(s.ts), int(bad.sum())
    assert result.budget.probes == n
    assert result.budget.good == n - n_bad
    assert result.budget.attainment == (n - n_bad) / n
    # The series spans days of a 30-day period: its budget is the period's, at the series' pace.
    period_n = n * 30 * DAY_S / (s.ts[-1] - s.ts[0])
    assert result.budget.remaining == pytest.approx(1 - n_bad / ((1 - OBJECTIVE) * period_n), abs=1e-12)
    return result


def test_fast_burn_pages_then_resolves_at_the_formulas_samples():
    s = series(2, seed=1)
    fail(s, start_h=30, hours=0.5)
    result = check(s)
    assert [e.event for e in result.events][:1] == ["firing"]
    assert result.events[0].severity == "page" and result.events[0].window == "1h/5m"
    assert result.events[-1].event == "resolved"


def test_slow_burn_tickets_and_never_pages():
    s = series(4, seed=2)
    fail_every(s, start_h=24, hours=48, every=50)  # 2% = 4x the budget's pace, for two days
    result = check(s)
    severities = {e.severity for e in result.events}
    assert "firing" in [e.event for e in result.events]
    assert severities == {"ticket"}


def test_latency_only_burn_counts_slow_ok_probes_as_bad():
    s = series(2, seed=3)
    slow(s, start_h=20, hours=2, ttft_ms=2500)
    result = check(s)
    assert result.events and result.events[0].severity == "page"
    # The same series against an SLO with no latency bound: every probe was ok, nothing burns.
    assert run_replay(s, "answers").events == ()
    assert run_replay(s, "answers").budget.remaining == 1.0


def test_clean_noise_never_fires():
    s = series(3, seed=4, error_rate=0.001)
    result = check(s)
    assert result.events == ()
    assert 0 < result.budget.remaining < 1


def test_ticket_escalates_to_page_and_resolution_keeps_the_page():
    s = series(3, seed=5)
    fail_every(s, start_h=24, hours=30, every=50)
    fail(s, start_h=40, hours=0.4)  # a fast burn inside the slow one
    result = check(s)
    events = [e.event for e in result.events]
    assert "escalated" in events
    assert result.events[events.index("escalated")].severity == "page"


def test_quorum_across_agents():
    """Three vantage points: one alone seeing the burn does not fire; two of three do."""
    base = series(1, seed=6)
    rows = ["timestamp,ok,ttft_ms,agent"]
    start_bad, end_bad = base.ts[0] + 12 * 3600, base.ts[0] + 13 * 3600
    for t in base.ts:
        for agent in ("a", "b", "c"):
            ok = not (start_bad <= t < end_bad and agent == "a")
            rows.append(f"{t:.0f},{'true' if ok else 'false'},{'' if not ok else 500},{agent}")
    one = replay(slo(), read_probes([r.split(",") for r in rows]))
    assert one.events == ()
    rows2 = [rows[0]] + [
        r.replace(",true,500,b", ",false,,b") if start_bad <= float(r.split(",")[0]) < end_bad else r for r in rows[1:]
    ]
    two = replay(slo(), read_probes([r.split(",") for r in rows2]))
    assert two.events[0].event == "firing" and two.events[0].agents == ("a", "b")


def test_cli_replays_and_prints_budget(tmp_path: Path, capsys):
    s = series(2, seed=1)
    fail(s, start_h=30, hours=0.5)
    (tmp_path / "firsttoken.yaml").write_text(CONFIG)
    (tmp_path / "series.csv").write_text(s.csv())
    args = [
        "backtest",
        "--config",
        str(tmp_path / "firsttoken.yaml"),
        "--slo",
        "chat",
        "--csv",
        str(tmp_path / "series.csv"),
    ]
    assert main([*args, "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    expected = expected_events(s, bad_of(s, 1500.0), 30 * DAY_S, OBJECTIVE)
    assert [(e["index"], e["event"], e["severity"]) for e in lines[:-1]] == expected
    n_bad = int(bad_of(s, 1500.0).sum())
    assert lines[-1]["summary"]["good"] == len(s.ts) - n_bad
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "firing" in out and "1h/5m" in out and "budget remaining" in out


def test_cli_bad_input_exits_2_with_one_line(tmp_path: Path, capsys):
    (tmp_path / "firsttoken.yaml").write_text(CONFIG)
    bad = tmp_path / "bad.csv"
    bad.write_text("timestamp,ok,ttft_ms\n1767571200,maybe,500\n")
    base = ["backtest", "--config", str(tmp_path / "firsttoken.yaml"), "--csv", str(bad)]
    assert main([*base, "--slo", "chat"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "bad.csv:2" in err and "ok" in err
    assert main([*base, "--slo", "nope"]) == 2
    assert "no SLO 'nope'" in capsys.readouterr().err
    nocol = tmp_path / "nocol.csv"
    nocol.write_text("timestamp,ok\n1767571200,true\n")
    assert main(["backtest", "--config", str(tmp_path / "firsttoken.yaml"), "--csv", str(nocol), "--slo", "chat"]) == 2
    assert "ttft_ms" in capsys.readouterr().err
