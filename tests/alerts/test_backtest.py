"""`firsttoken backtest`: CSV parsing, replay, output, and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.detection.synthetic_a import Noise, Shift, generate
from monitor.alerts.backtest import BacktestError, read_points, replay
from monitor.alerts.detectors.detect import DetectorSettings, SeriesDetector, default_settings
from monitor.cli import main

QUIET = Noise(spike_rate=0.0, daily_amplitude=0.0, error_rate=0.0)


def rows(text: str) -> list[list[str]]:
    return [line.split(",") for line in text.strip().splitlines()]


def write_series(path: Path, values, step_s: float = 60.0, start_s: float = 1_767_571_200.0) -> Path:
    lines = ["timestamp,value,note"]
    for i, v in enumerate(values):
        lines.append(f"{start_s + i * step_s:.0f},{'' if v is None else f'{v:.3f}'},x")
    path.write_text("\n".join(lines) + "\n")
    return path


def shifted_values():
    return list(generate(1, 600, 60.0, QUIET, (Shift(300, 60, 2.0),)).values)


# --------------------------------------------------------------- parsing
def test_timestamps_iso_and_epoch_values_and_failures():
    points = read_points(
        rows(
            """
timestamp,value,extra
2026-01-05T00:00:00Z,500,a
2026-01-05T00:01:00+00:00,,b
2026-01-05 00:02:00,-1,c
1767571380,512.5,d
1767571440000,0,e
"""
        ),
        "ttft_ms",
    )
    assert [p.timestamp_s for p in points] == [1767571200.0, 1767571260.0, 1767571320.0, 1767571380.0, 1767571440.0]
    assert [p.value for p in points] == [500.0, None, None, 512.5, 0.0]  # empty and negative: failed probes
    assert [p.line for p in points] == [2, 3, 4, 5, 6]


def test_samples_csv_columns_are_understood():
    points = read_points(rows("id,started_at,target,ttft_ms\n1,2026-01-05T00:00:00Z,a/b@c:d,420\n"), "ttft_ms")
    assert points[0].value == 420.0


@pytest.mark.parametrize(
    "text,message",
    [
        ("", "empty file"),
        ("time,value\n1,2\n", ":1: no timestamp column"),
        ("timestamp,latency\n1,2\n", ":1: no value (or ttft_ms) column"),
        ("timestamp,value\n1767571200,500\nyesterday,500\n", ":3: bad timestamp 'yesterday'"),
        ("timestamp,value\n1767571200,500\n1767571260,fast\n", ":3: bad value 'fast'"),
        ("timestamp,value\n1767571200,500\n1767571260,nan\n", ":3: bad value 'nan'"),
        ("timestamp,value\n1767571200,500\n1767571260\n", ":3: 1 columns, the header has 2"),
        ("timestamp,value\n1767571260,500\n1767571200,500\n", ":3: timestamp goes back in time"),
        ("timestamp,value,target\n1767571200,5,a\n1767571260,5,b\n", ":3: a second target"),
    ],
)
def test_bad_rows_name_their_line(text, message):
    with pytest.raises(BacktestError) as exc:
        read_points(rows(text) if text else [], "ttft_ms", "f.csv")
    assert message in str(exc.value) and "\n" not in str(exc.value)


# ---------------------------------------------------------------- replay
def test_replay_matches_the_live_detector_point_for_point():
    values = shifted_values()
    points = read_points(
        [["timestamp", "value"], *([f"{1e9 + 60 * i}", f"{v}"] for i, v in enumerate(values))], "ttft_ms"
    )
    settings = default_settings("ttft_ms")
    alarms = replay(points, [("r", settings)])
    det = SeriesDetector(settings)
    live = [i for i, v in enumerate(values) if det.observe(1e9 + 60 * i, v).alarm_started]
    assert [a.index for a in alarms] == live and len(live) == 1
    alarm = alarms[0]
    assert alarm.rule == "r" and alarm.metric == "ttft_ms" and 1.6 < alarm.value / alarm.baseline < 2.5
    assert alarm.resolved_index is not None and 360 <= alarm.resolved_index <= 380 and not alarm.new_normal


def test_replay_runs_every_rule_and_sorts_by_row():
    values = [1.0] * 100 + [None] * 10 + [1.0] * 100
    points = read_points(
        [["timestamp", "value"], *([str(60 * i), "" if v is None else "1"] for i, v in enumerate(values))], "x"
    )
    rules = [
        ("errors", default_settings("error_rate")),
        ("errors-strict", DetectorSettings(metric="error_rate", kind="threshold", above=0.05, window_s=900.0)),
    ]
    alarms = replay(points, rules)
    assert [a.rule for a in alarms] == ["errors-strict", "errors"]
    assert alarms[0].index < alarms[1].index


# ------------------------------------------------------------------- CLI
def test_cli_table_and_json(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no firsttoken.yaml here: built-in defaults
    csv_path = write_series(tmp_path / "s.csv", shifted_values())
    assert main(["backtest", "--csv", str(csv_path)]) == 0
    out = capsys.readouterr().out
    assert "600 rows (0 failed probes)" in out and "built-in ttft_ms regression" in out and "1 alarm" in out
    assert main(["backtest", "--csv", str(csv_path), "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1
    alarm = json.loads(lines[0])
    assert {"index", "timestamp", "rule", "value", "baseline", "resolved_index"} <= set(alarm)
    assert 300 <= alarm["index"] <= 305 and alarm["timestamp"].endswith("Z")


def test_cli_bad_row_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    bad = tmp_path / "bad.csv"
    bad.write_text("timestamp,value\n2026-01-05T00:00:00Z,500\n2026-01-05T00:01:00Z,oops\n")
    assert main(["backtest", "--csv", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"{bad}:3: bad value 'oops'" in err
    assert main(["backtest", "--csv", str(tmp_path / "missing.csv")]) == 2
    assert "cannot read" in capsys.readouterr().err


CONFIG = """
prompts:
  short: {messages: [{role: user, content: hi}], max_tokens: 16}
providers:
  sim:
    protocol: openai-chat
    regions: {local: "http://127.0.0.1:8400/v1"}
    models: [fast]
checks:
  - providers: [sim]
    prompts: [short]
alerts:
  - name: ttft-doubles
    metric: ttft_ms
    kind: regression
    min_change: 100%
  - name: tps-p50-floor
    metric: tps
    kind: threshold
    percentile: 50
    below: 20
"""


def test_cli_rule_from_config(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "firsttoken.yaml").write_text(CONFIG)
    csv_path = write_series(tmp_path / "s.csv", shifted_values())
    assert main(["backtest", "--csv", str(csv_path), "--rule", "ttft-doubles", "--json"]) == 0
    alarms = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [a["rule"] for a in alarms] == ["ttft-doubles"]
    assert main(["backtest", "--csv", str(csv_path), "--rule", "nope"]) == 2
    assert "no alert rule 'nope'" in capsys.readouterr().err
    assert main(["backtest", "--csv", str(csv_path), "--rule", "tps-p50-floor", "--metric", "ttft_ms"]) == 2
    assert "is on tps" in capsys.readouterr().err
