"""Detection: statistics, the daily profile, each detector's state machine, and the benchmark goals."""

from __future__ import annotations

import json
import math
import random
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import integrate, stats

from benchmarks.detection import original as bench
from benchmarks.detection.synthetic_a import DAY_S, EPOCH_S, Noise, Shift, generate
from benchmarks.detection.synthetic_b import Conditions, generate_b, plan_changes
from monitor.alerts.detectors import stats as st
from monitor.alerts.detectors.base import FIRING, OK, PENDING
from monitor.alerts.detectors.detect import DetectorSettings, SeriesDetector, default_settings, settings_from_rule
from monitor.alerts.detectors.seasonal import DailyProfile

QUIET = Noise(spike_rate=0.0, daily_amplitude=0.0, error_rate=0.0)  # lognormal noise only
REGRESSION = DetectorSettings(metric="ttft_ms", kind="regression", min_change=0.5)


def feed(det: SeriesDetector, values, step_s: float = 60.0, start_s: float = EPOCH_S):
    return [det.observe(start_s + i * step_s, v) for i, v in enumerate(values)]


def started(evs) -> list[int]:
    return [i for i, e in enumerate(evs) if e.alarm_started]


def resolved(evs) -> list[int]:
    return [i for i, e in enumerate(evs) if e.resolved]


def quiet(n: int, seed: int, shifts=(), level: float = 500.0, **noise) -> list[float | None]:
    return list(generate(seed, n, 60.0, replace(QUIET, level=level, **noise), tuple(shifts)).values)


# ------------------------------------------------------------------ stats
def test_quantile_matches_numpy_linear():
    rng = np.random.default_rng(1)
    for n in (1, 2, 5, 15, 60):
        xs = sorted(rng.lognormal(6, 0.3, n).tolist())
        for q in (0.0, 0.1, 0.5, 0.9, 0.99, 1.0):
            assert st.quantile_sorted(xs, q) == pytest.approx(np.percentile(xs, 100 * q))
    assert st.median([3.0, 1.0, 2.0, 10.0]) == 2.5


def test_binomial_tail_matches_scipy():
    for n, p in ((15, 0.05), (60, 0.3), (500, 0.01), (2000, 0.5)):
        for k in (0, 1, 2, 4, n // 3, n):
            assert st.binom_sf(k, n, p) == pytest.approx(stats.binom.sf(k - 1, n, p), rel=1e-9, abs=1e-300)
    assert st.binom_sf(3, 10, 0.0) == 0.0 and st.binom_sf(3, 10, 1.0) == 1.0 and st.binom_sf(11, 10, 0.5) == 0.0


def test_clipped_scale_factor_turns_a_clipped_mean_back_into_a_sd():
    for clip in (1.5, 2.0, 3.0):
        mean, _ = integrate.quad(lambda z, c=clip: min(abs(z), c) * stats.norm.pdf(z), -10, 10, points=[-clip, clip])
        assert st.clipped_abs_mean_factor(clip) == pytest.approx(1 / mean, rel=1e-6)


def test_mixture_llr_ignores_far_values_and_is_bounded():
    mus = [math.log(1.5), math.log(2.0), math.log(4.0)]
    s = 0.25
    near = st.mixture_llr(math.log(2.0), mus, s, 0.05, 0.2)
    assert near[1] == max(near) and near[1] > 3  # a 2x sample is strong evidence for the 2x chart
    far = st.mixture_llr(math.log(60.0), mus, s, 0.05, 0.2)
    assert all(abs(v) < 0.01 for v in far)  # a 60x spike fits no hypothesis: nothing
    cap = math.log((1 - 0.05) / (s * math.sqrt(2 * math.pi)) / (0.05 * 0.2)) + 0.01
    for d in np.linspace(-3, 5, 200):
        values = st.mixture_llr(float(d), mus, s, 0.05, 0.2)
        assert max(values) <= cap  # no single sample can say more than this
        if d < mus[0] / 2:
            assert max(values) <= 0  # closer to "no shift" than to every shift


def test_sorted_window_median_quartiles_prune_and_bound():
    w = st.SortedWindow(max_len=50)
    rng = random.Random(2)
    for i in range(80):
        w.add(float(i), rng.gauss(0, 1))
    assert len(w) == 50 and w.items[0][0] == 30.0  # the oldest fell out
    xs = [x for _, x in w.items]
    assert w.median() == pytest.approx(float(np.median(xs)))
    assert w.sorted == sorted(xs)
    w.prune(before_ts=70.0, keep=20)
    assert len(w) == 20  # would leave 10, keeps 20
    w.prune(before_ts=75.0, keep=3)
    assert [t for t, _ in w.items] == [float(t) for t in range(75, 80)]
    assert st.SortedWindow.from_state(50, json.loads(json.dumps(w.to_state()))).sorted == w.sorted


# ---------------------------------------------------------------- profile
def _cycle_day(profile: DailyProfile, day: int, amp: float, step_s: float = 300.0, level: float = 0.0, seed: int = 0):
    rng = random.Random(seed)
    for k in range(int(DAY_S / step_s)):
        ts = day * DAY_S + k * step_s
        profile.add(ts, level + math.log1p(amp * math.sin(2 * math.pi * k * step_s / DAY_S)) + rng.gauss(0, 0.25))


def test_daily_profile_learns_the_cycle_from_one_day():
    p = DailyProfile()
    _cycle_day(p, 20000, 0.25)
    assert not p.active
    p.add(20001 * DAY_S, 0.0)  # the first sample of the next day closes the first
    assert p.active
    errors = [p.offset(20002 * DAY_S + h * 3600) - math.log1p(0.25 * math.sin(2 * math.pi * h / 24)) for h in range(24)]
    mean = sum(errors) / 24
    assert max(abs(e - mean) for e in errors) < 0.06


def test_daily_profile_outvotes_a_day_with_a_level_step():
    p = DailyProfile()
    for d in range(4):
        _cycle_day(p, 20000 + d, 0.25, seed=d)
    before = [p.offset(h * 3600.0) for h in range(24)]
    rng = random.Random(9)
    for k in range(288):  # a day flat but for a 2x plateau from 08:00 to 14:00
        p.add((20004 * DAY_S) + k * 300, (math.log(2) if 96 <= k < 168 else 0.0) + rng.gauss(0, 0.25))
    p.add(20005 * DAY_S, 0.0)
    after = [p.offset(h * 3600.0) for h in range(24)]
    assert max(abs(a - b) for a, b in zip(after, before, strict=True)) < 0.06
    restored = DailyProfile.from_state(json.loads(json.dumps(p.to_state())))
    assert restored.coef == p.coef and restored.history == p.history


# ------------------------------------------------------------- regression
def test_two_x_shift_fires_once_within_a_few_samples_and_resolves_after_recovery():
    values = quiet(600, 1, [Shift(300, 60, 2.0)])
    evs = feed(SeriesDetector(REGRESSION), values)
    assert started(evs) and len(started(evs)) == 1
    alarm = started(evs)[0]
    assert 300 <= alarm <= 305
    assert evs[alarm - 1].state == PENDING and evs[alarm].state == FIRING
    assert 1.6 < evs[alarm].value / evs[alarm].baseline < 2.5
    assert 430 < evs[alarm].baseline < 570  # the level before the shift (500)
    assert len(resolved(evs)) == 1 and 360 <= resolved(evs)[0] <= 380 and not evs[resolved(evs)[0]].new_normal
    assert all(e.state == FIRING for e in evs[alarm : resolved(evs)[0]])


def test_resolution_needs_resolve_after_clear_evaluations():
    values = quiet(600, 1, [Shift(300, 60, 2.0)])
    fast = resolved(feed(SeriesDetector(replace(REGRESSION, resolve_after=1)), values))[0]
    slow = resolved(feed(SeriesDetector(replace(REGRESSION, resolve_after=6)), values))[0]
    assert slow - fast == 5


def test_for_evaluations_sets_how_many_raising_evaluations_it_takes():
    values = quiet(400, 2, [Shift(300, 100, 3.0)])
    counted = replace(REGRESSION, min_duration_s=0.0)  # evaluations alone: no hold in time (test_hold.py has that)
    first = {f: started(feed(SeriesDetector(replace(counted, for_evaluations=f)), values))[0] for f in (1, 2, 4)}
    assert first[2] == first[1] + 1 and first[4] == first[1] + 3


def test_isolated_and_paired_spikes_never_page():
    values = quiet(3000, 3)
    for i in range(100, 3000, 17):
        values[i] *= 10.0  # an isolated 10x spike every 17 minutes
    for i in range(400, 3000, 300):
        values[i] *= 8.0
        values[i + 1] *= 12.0  # and now and then two in a row
    evs = feed(SeriesDetector(REGRESSION), values)
    assert started(evs) == []
    assert all(e.state != FIRING for e in evs)


def test_daily_cycle_does_not_page_but_a_shift_on_top_of_it_does():
    noise = Noise(sigma=0.25, spike_rate=0.02, daily_amplitude=0.25, error_rate=0.005)
    step, days = 300.0, 6
    n = int(days * DAY_S / step)
    calm = generate(11, n, step, noise)
    assert started(feed(SeriesDetector(REGRESSION), calm.values, step)) == []
    shift = Shift(int(4.6 * DAY_S / step), 24, 2.0)  # two hours at 2x on the fifth day, mid-rise
    shifted = generate(11, n, step, noise, (shift,))
    alarms = started(feed(SeriesDetector(REGRESSION), shifted.values, step))
    assert len(alarms) == 1 and shift.start <= alarms[0] <= shift.start + 6


def test_tps_regression_is_a_drop_and_latency_improvements_do_not_page():
    tps = DetectorSettings(metric="tps", kind="regression")
    slower = quiet(500, 4, [Shift(300, 80, 2.0)], level=80.0, bad_up=False)  # tps halves
    faster = quiet(500, 4, [Shift(300, 80, 2.0)], level=80.0)  # tps doubles
    assert len(started(feed(SeriesDetector(tps), slower))) == 1
    assert started(feed(SeriesDetector(tps), faster)) == []  # nor does the return to usual after it
    quicker_ttft = quiet(500, 4, [Shift(300, 80, 2.0)], bad_up=False)  # TTFT halves
    assert started(feed(SeriesDetector(REGRESSION), quicker_ttft)) == []


def test_a_permanent_shift_becomes_the_new_normal_and_stops_alarming():
    values = quiet(1400, 5, [Shift(300, 10_000, 2.0)])
    evs = feed(SeriesDetector(REGRESSION), values)
    assert len(started(evs)) == 1
    alarm, done = started(evs)[0], resolved(evs)
    assert len(done) == 1 and evs[done[0]].new_normal
    assert done[0] - alarm == 120  # accept_after_s (2 h) at one sample a minute
    assert evs[-1].baseline > 850  # the baseline is now the shifted level (1000)


def test_a_shift_just_over_min_change_pages_once_without_flapping():
    values = quiet(900, 6, [Shift(300, 110, 1.6)])
    evs = feed(SeriesDetector(REGRESSION), values)
    assert len(started(evs)) == 1 and len(resolved(evs)) == 1
    assert 300 <= started(evs)[0] <= 320


def test_shifts_being_judged_do_not_teach_the_noise_model():
    """White noise with 1.5x two-hour steps: while a chart builds evidence, the samples leaving the
    recent window join the level but not the noise scale or its autocorrelation. Learned, the steps
    read as correlated noise (phi > 0 in 65% of evaluations here, against 29%) and blunted every chart."""
    rng = random.Random(21)
    det = SeriesDetector(DetectorSettings(metric="ttft_ms", kind="regression", min_change=0.5))
    phis = []
    for k in range(8 * 288):
        shifted = k > 288 and k % 120 < 24  # two hours in every ten
        value = 500.0 * math.exp(rng.gauss(0.0, 0.3) + (math.log(1.5) if shifted else 0.0))
        det.observe(EPOCH_S + k * 300.0, value)
        if det._impl.base.ready() and k > 600:
            phis.append(det._impl.base.autocorrelation())
    assert sum(phi > 0 for phi in phis) / len(phis) < 0.45


def test_shifts_under_min_change_do_not_page():
    values = quiet(900, 7, [Shift(300, 300, 1.2)])
    assert started(feed(SeriesDetector(REGRESSION), values)) == []


def test_failed_probes_are_not_evaluated_and_do_not_resolve():
    values = quiet(600, 1, [Shift(300, 100, 2.0)])
    for i in range(320, 360):
        values[i] = None  # 40 failed probes in the middle of the shift
    evs = feed(SeriesDetector(REGRESSION), values)
    assert len(started(evs)) == 1 and started(evs)[0] < 320
    assert all(not e.evaluated and e.state == FIRING for e in evs[320:360])
    assert len(resolved(evs)) == 1 and 400 < resolved(evs)[0] < 420 and not evs[resolved(evs)[0]].new_normal


def test_warming_up_is_not_evaluated():
    evs = feed(SeriesDetector(REGRESSION), quiet(100, 8))
    assert not any(e.evaluated for e in evs[:50])
    assert all(e.evaluated for e in evs[70:])


def test_an_observation_older_than_the_last_is_ignored():
    det = SeriesDetector(REGRESSION)
    feed(det, quiet(100, 8))
    before = det.to_state()
    ev = det.observe(EPOCH_S, 5000.0)
    assert not ev.evaluated and det.to_state() == before


# ------------------------------------------------------------ thresholds
P90 = DetectorSettings(metric="ttft_ms", kind="threshold", percentile=90, above=2000.0, window_s=600.0)


def test_threshold_on_a_percentile_fires_and_resolves_with_hysteresis():
    values = [1000.0] * 30 + [3000.0] * 15 + [1800.0] * 15 + [1000.0] * 20
    evs = feed(SeriesDetector(P90), values)
    # a 10-sample window: p90 over 2000 once 2 slow samples are in; 2 evaluations in a row to fire
    assert started(evs) == [32]
    assert evs[32].value > 2000 and evs[32].baseline == 2000.0
    # 1800 is under the bound but not under 1600 (20% back): still firing; it resolves on the 1000s
    assert all(e.state == FIRING for e in evs[32:60])
    assert resolved(evs) and resolved(evs)[0] >= 60 + 2


def test_threshold_needs_min_samples_in_the_window():
    det = SeriesDetector(replace(P90, min_samples=5, window_s=180.0))
    evs = feed(det, [5000.0] * 20)  # 3 samples per window: never enough
    assert not any(e.evaluated for e in evs) and started(evs) == []


def test_threshold_below_for_tps():
    det = SeriesDetector(DetectorSettings(metric="tps", kind="threshold", percentile=50, below=20.0, window_s=300.0))
    evs = feed(det, [60.0] * 10 + [10.0] * 10 + [60.0] * 10)
    assert len(started(evs)) == 1 and len(resolved(evs)) == 1


def test_error_rate_threshold():
    det = SeriesDetector(DetectorSettings(metric="error_rate", kind="threshold", above=0.2, window_s=900.0))
    values = [1.0] * 60 + [None, 1.0] * 15 + [1.0] * 60  # 50% failures for 30 minutes
    evs = feed(det, values)
    assert len(started(evs)) == 1 and 60 < started(evs)[0] < 75 and 0.2 < evs[started(evs)[0]].value <= 0.5
    assert len(resolved(evs)) == 1


def test_error_rate_regression_has_an_absolute_floor():
    det = SeriesDetector(DetectorSettings(metric="error_rate", kind="regression", window_s=900.0))
    clean = [1.0] * 600
    one_percent = [None if i % 100 == 0 else 1.0 for i in range(600)]
    burst = [None if i % 2 else 1.0 for i in range(40)]
    evs = feed(det, clean + one_percent + burst + clean)
    assert len(started(evs)) == 1 and 1200 <= started(evs)[0] < 1215
    assert len(resolved(evs)) == 1


# ------------------------------------------------------ state round trip
def _kinds():
    yield REGRESSION, list(generate(12, 2500, 60.0, Noise(), (Shift(1700, 200, 2.0),)).values)
    yield (
        DetectorSettings(metric="tps", kind="regression"),
        [None if v is None else 40000 / v for v in generate(13, 1500, 60.0, Noise(), (Shift(900, 400, 2.5),)).values],
    )
    yield P90, [1000.0] * 30 + [3000.0] * 15 + [1000.0] * 20
    yield default_settings("error_rate"), [1.0] * 60 + [None, 1.0] * 15 + [1.0] * 60
    yield DetectorSettings(metric="error_rate", kind="regression"), [1.0] * 300 + [None, 1.0] * 40 + [1.0] * 300


@pytest.mark.parametrize("settings,values", list(_kinds()))
def test_state_round_trip_continues_exactly(settings, values):
    whole = feed(SeriesDetector(settings), values)
    states = {e.state for e in whole}
    assert {PENDING, FIRING} <= states, "the series should exercise every state"
    cuts = sorted({len(values) // 3, *(i for i, e in enumerate(whole) if e.alarm_started or e.state == PENDING)})
    for cut in cuts[:6]:
        det = SeriesDetector(settings)
        first = feed(det, values[:cut])
        saved = json.loads(json.dumps(det.to_state()))  # through JSON, as the database keeps it
        det = SeriesDetector.from_state(settings, saved)
        rest = [det.observe(EPOCH_S + i * 60.0, v) for i, v in enumerate(values) if i >= cut]
        assert first + rest == whole, f"diverged after a restart at {cut}"


def test_incompatible_state_starts_afresh():
    det = SeriesDetector.from_state(REGRESSION, {"detector": {"version": 999}})
    assert det.state == OK and feed(det, [500.0])[0].evaluated is False
    assert SeriesDetector.from_state(REGRESSION, None).state == OK


def test_a_checkpoint_from_before_the_autocorrelation_estimate_loads_and_carries_on():
    # State written by the previous release has no "autocorrelation" in its baseline: it loads with
    # everything else kept, the estimate starts from no correlation, and the detector still alarms.
    values = list(generate(12, 2500, 60.0, Noise(), (Shift(1700, 200, 2.0),)).values)
    det = SeriesDetector(REGRESSION)
    feed(det, values[:1500])
    saved = json.loads(json.dumps(det.to_state()))
    old = json.loads(json.dumps(saved))
    del old["detector"]["baseline"]["autocorrelation"]
    restored = SeriesDetector.from_state(REGRESSION, old)
    base = restored._impl.base
    assert base.to_state()["window"] == saved["detector"]["baseline"]["window"]
    assert (base.ac_cross, base.ac_square, base.prev_resid) == (0.0, 0.0, None)
    rest = [restored.observe(EPOCH_S + i * 60.0, v) for i, v in enumerate(values) if i >= 1500]
    assert any(e.alarm_started for e in rest[200:215])  # the 2x shift at 1700 is caught as before


def test_autocorrelated_noise_is_measured_and_discounted():
    def phi_after(conditions):
        det = SeriesDetector(REGRESSION)
        for ts, v in generate_b(3, 3000, 300.0, conditions).points():
            det.observe(ts, v)
        return det._impl.base.autocorrelation()

    plain = dict(t_dof=None, drift_sd=0.0, spike_rate=0.0, amplitude_range=(0.0, 0.0))
    assert phi_after(Conditions(sigma=0.25, ar_phi=0.0, **plain)) < 0.08
    assert 0.15 < phi_after(Conditions(sigma=0.25, ar_phi=0.3, **plain)) < 0.45


def test_second_generator_is_seeded_and_labelled():
    changes = plan_changes(5, 8640, 300.0)
    assert changes and all(1.5 <= c.factor <= 3.0 and 12 <= c.length <= 288 for c in changes)
    a = generate_b(5, 8640, 300.0, Conditions(sigma=0.4), changes)
    assert a == generate_b(5, 8640, 300.0, Conditions(sigma=0.4), changes)
    shifted = [v for c in changes for v in a.values[c.start + c.ramp : c.end] if v is not None]
    calm = [v for v in a.values[: changes[0].start] if v is not None]
    assert np.median(shifted) > 1.3 * np.median(calm)


# ---------------------------------------------------------------- settings
def test_settings_from_a_rule_like_object():
    rule = SimpleNamespace(
        name="r",
        metric="tps",
        kind="regression",
        min_change=None,
        percentile=None,
        above=None,
        below=None,
        window_s=600.0,
        min_samples=7,
        for_evaluations=3,
        resolve_after=4,
        baseline_window_s=None,
    )
    s = settings_from_rule(rule)
    assert (s.metric, s.kind, s.min_change, s.window_s, s.min_samples, s.for_evaluations, s.resolve_after) == (
        "tps",
        "regression",
        0.5,
        600.0,
        7,
        3,
        4,
    )
    assert s.baseline_window_s == DAY_S and not s.up_is_bad
    with pytest.raises(ValueError):
        SeriesDetector(DetectorSettings(metric="latency"))
    with pytest.raises(ValueError):
        SeriesDetector(DetectorSettings(kind="threshold"))  # neither above nor below


# ------------------------------------------------------ benchmark goals
def test_benchmark_goals_hold_at_small_scale():
    """Issue 5's goals on a fixed seed, on the benchmark's own series: a detector change that breaks them fails here.

    5-minute sampling carries the false-alarm check (five target-months per metric are enough to tell
    0.3 a month from more than 1); 1-minute sampling checks F1 and the 2x delay.
    """
    regressions = [k for k in bench.KINDS if k[0] in ("regression ttft_ms", "regression tps (down)")]
    rows = bench.run({300: bench.Scale(3, 1, 5)}, jobs=1, seed=3, kinds=regressions)
    rows += bench.run({60: bench.Scale(1, 0.5, 0)}, jobs=1, seed=3, kinds=regressions[:1])
    for name, interval_s, score in rows:
        where = f"{name} at {interval_s // 60} min"
        assert score.eligible >= 15, where
        assert score.f1 >= 0.9, f"{where}: F1 {score.f1:.3f}"
        assert score.delay(0.5, two_x=True) <= 3, f"{where}: 2x median delay {score.delay(0.5, True)}"
        assert score.false_per_month <= 1.0, f"{where}: {score.false_per_month:.2f} false alarms a month"
