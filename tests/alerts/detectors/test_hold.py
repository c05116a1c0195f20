"""The adaptive chart on quiet, autocorrelated series, and `min_duration`: how long a shift must hold to page."""

from __future__ import annotations

import json
import math
import random
from dataclasses import replace

import pytest

from monitor.alerts.detectors.base import FIRING, PENDING
from monitor.alerts.detectors.detect import DetectorSettings, SeriesDetector, settings_from_rule
from tests.config_helpers import load, minimal

EPOCH_S = 1_775_001_600.0
STEP_S = 300.0  # the default probe interval
REGRESSION = DetectorSettings(metric="ttft_ms", kind="regression", min_change=0.5)


def quiet_ar(seed: int, before: int, after: int, factor: float, phi: float = 0.5, sd: float = 0.02,
             shifted_sd: float = 0.07) -> list[float]:  # fmt: skip
    """AR(1) noise in log space (marginal sd `sd`), then a step of `factor` whose level wobbles by `shifted_sd`."""
    rng, ar, out = random.Random(seed), 0.0, []
    for k in range(before + after):
        s = sd if k < before else shifted_sd
        ar = phi * ar + math.sqrt(1 - phi * phi) * s * rng.gauss(0.0, 1.0)
        out.append(400.0 * math.exp(ar + (math.log(factor) if k >= before else 0.0)))
    return out


def run(settings: DetectorSettings, values, step_s: float = STEP_S):
    det = SeriesDetector(settings)
    return det, [det.observe(EPOCH_S + i * step_s, v) for i, v in enumerate(values)]


def first_alarm(evs) -> int | None:
    return next((i for i, e in enumerate(evs) if e.alarm_started), None)


# ----------------------------------------------------------- quiet series
@pytest.mark.parametrize("seed", range(8))
def test_a_clean_2_15x_step_on_a_quiet_autocorrelated_series_pages_within_6_samples(seed):
    # Noise 2% with lag-1 autocorrelation 0.5, three days of it, then a 2.15x step whose new level
    # wobbles by +-7%: the shape that took 15 samples to page when the discount for correlated noise
    # and the fixed grid of shift sizes were all the detector had.
    before = 3 * 288
    values = quiet_ar(seed, before, 48, 2.15)
    det, evs = run(REGRESSION, values)
    assert det._impl.base.autocorrelation() > 0.3, "the series should read as autocorrelated"
    alarm = first_alarm(evs)
    assert alarm is not None and before <= alarm <= before + 6, f"paged at {alarm}, the step is at {before}"


def test_the_quiet_autocorrelated_noise_alone_never_pages():
    for seed in range(4):
        _, evs = run(REGRESSION, quiet_ar(seed, 6 * 288, 0, 1.0))
        assert first_alarm(evs) is None


def test_the_adaptive_chart_survives_a_checkpoint_mid_step():
    before = 3 * 288
    values = quiet_ar(3, before, 48, 2.15)
    _, whole = run(REGRESSION, values)
    for cut in (before + 1, before + 2):
        det = SeriesDetector(REGRESSION)
        first = [det.observe(EPOCH_S + i * STEP_S, v) for i, v in enumerate(values[:cut])]
        saved = json.loads(json.dumps(det.to_state()))
        assert saved["detector"]["adaptive"][1], "the run of the step is under way at the cut"
        det = SeriesDetector.from_state(REGRESSION, saved)
        rest = [det.observe(EPOCH_S + i * STEP_S, v) for i, v in enumerate(values) if i >= cut]
        assert first + rest == whole


# ------------------------------------------------------------ min_duration
def blips(run_length: int, every: int = 97, n: int = 4 * 288, factor: float = 2.5) -> list[float]:
    """Quiet white noise with a run of `run_length` slow probes (2.5x) every `every` samples."""
    rng = random.Random(run_length)
    values = [400.0 * math.exp(rng.gauss(0.0, 0.05)) for _ in range(n)]
    for start in range(2 * 288, n - run_length, every):
        for k in range(start, start + run_length):
            values[k] *= factor
    return values


def test_runs_shorter_than_min_duration_never_page_and_say_so():
    # Runs of four slow probes at 5-minute sampling last 15 minutes (first to last): evidence enough to
    # page, as the generator's 2x steps do; with min_duration 20m they are never a page, and each is
    # reported as a short run.
    values = blips(4)
    _, evs = run(REGRESSION, values)
    assert first_alarm(evs) is not None, "by default (two sampling intervals) a 15-minute run may page"
    _, evs = run(replace(REGRESSION, min_duration_s=1200.0), values)
    assert first_alarm(evs) is None
    short = [e.short_run_s for e in evs if e.short_run_s is not None]
    assert short and all(600.0 <= s < 1200.0 for s in short)


def test_a_shift_that_holds_pages_once_it_has_held_min_duration():
    values = quiet_ar(1, 3 * 288, 48, 3.0, phi=0.0, sd=0.05, shifted_sd=0.05)
    at = 3 * 288
    by_duration = {}
    for minutes in (0, 10, 30, 60):
        _, evs = run(replace(REGRESSION, min_duration_s=60.0 * minutes), values)
        alarm = first_alarm(evs)
        assert alarm is not None
        by_duration[minutes] = alarm
        assert (alarm - at) * STEP_S >= 60.0 * minutes
        assert evs[alarm - 1].state == PENDING and evs[alarm].state == FIRING
    assert by_duration[30] == at + 6 and by_duration[60] == at + 12  # held exactly long enough, not later
    assert by_duration[0] <= by_duration[10] <= by_duration[30]


def test_min_duration_comes_from_the_rule():
    cfg = minimal(alerts=[{"name": "slow", "metric": "ttft_ms", "kind": "regression", "min_duration": "20m"},
                          {"name": "plain", "metric": "ttft_ms", "kind": "regression"}])  # fmt: skip
    slow, plain = load(cfg).alerts
    assert settings_from_rule(slow).min_duration_s == 1200.0
    assert settings_from_rule(plain).min_duration_s is None  # two sampling intervals (regression.py)


def test_backtest_lists_the_runs_too_short_to_page(tmp_path, capsys, monkeypatch):
    from monitor.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "firsttoken.yaml").write_text(
        "prompts:\n  short: {messages: [{role: user, content: hi}], max_tokens: 16}\n"
        "providers:\n  sim:\n    protocol: openai-chat\n    regions: {local: 'http://127.0.0.1:8400/v1'}\n"
        "    models: [fast]\n"
        "checks:\n  - {providers: [sim], prompts: [short]}\n"
        "alerts:\n  - {name: twenty, metric: ttft_ms, kind: regression, min_duration: 20m}\n"
    )
    lines = ["timestamp,value"] + [f"{EPOCH_S + i * STEP_S:.0f},{v:.3f}" for i, v in enumerate(blips(4))]
    (tmp_path / "s.csv").write_text("\n".join(lines) + "\n")
    assert main(["backtest", "--csv", "s.csv", "--rule", "twenty"]) == 0
    out = capsys.readouterr().out
    assert "no alarms" in out
    listed = [line for line in out.splitlines() if line.startswith("  row ")]
    assert "shorter than min_duration, not paged" in out and listed
    assert all("twenty  held 1" in line for line in listed)  # 10-15 minutes each


def test_a_checkpoint_without_the_adaptive_chart_or_the_hold_loads_and_carries_on():
    # A state written before the adaptive chart and min_duration existed: the chart starts afresh, a
    # pending alert's hold is counted from its next raising evaluation, and everything else is kept.
    before = 3 * 288
    values = quiet_ar(2, before, 48, 2.15)
    det = SeriesDetector(REGRESSION)
    for i, v in enumerate(values[:before]):
        det.observe(EPOCH_S + i * STEP_S, v)
    old = json.loads(json.dumps(det.to_state()))
    del old["detector"]["adaptive"]
    del old["detector"]["life"]["since"], old["detector"]["life"]["held_s"]
    restored = SeriesDetector.from_state(REGRESSION, old)
    assert restored._impl.base.to_state() == det._impl.base.to_state()
    assert not restored._impl.adaptive.active()
    rest = [restored.observe(EPOCH_S + i * STEP_S, v) for i, v in enumerate(values) if i >= before]
    alarm = first_alarm(rest)
    assert alarm is not None and alarm <= 6
