"""The noisy-spell scale (spell.py) reads a spell's noise from neighbouring differences, converted with the
series' own lag-1 autocorrelation: on strongly correlated noise the discount's cap (0.5) would understate it."""

from __future__ import annotations

import math
import random
import statistics

from monitor.alerts.detectors.baseline import MAX_PHI
from monitor.alerts.detectors.detect import DetectorSettings, SeriesDetector
from monitor.alerts.detectors.spell import MAX_PHI as SPELL_MAX_PHI
from monitor.alerts.detectors.spell import NoisySpell

EPOCH_S = 1_775_001_600.0
STEP_S = 300.0


def ar1(rng: random.Random, n: int, phi: float, sd: float) -> list[float]:
    """AR(1) noise of marginal sd `sd`."""
    x, out = 0.0, []
    for _ in range(n):
        x = phi * x + math.sqrt(1.0 - phi * phi) * sd * rng.gauss(0.0, 1.0)
        out.append(x)
    return out


def spell_estimates(phi_true: float, phi_told: float, sd: float = 0.3) -> list[float]:
    """The spell's scale over many 24-difference windows of AR(1) noise, told `phi_told`."""
    rng, out = random.Random(7), []
    for _ in range(200):
        spell = NoisySpell()
        for r in ar1(rng, 25, phi_true, sd):
            spell.push(r)
        out.append(spell.scale(0.0, phi_told))
    return out


def test_the_spell_reads_strongly_correlated_noise_at_its_width_when_told_its_autocorrelation():
    told_true = statistics.median(spell_estimates(0.85, 0.85))
    told_cap = statistics.median(spell_estimates(0.85, MAX_PHI))
    # The scale is the estimate over the slack (1.25): about 0.3 / 1.25 = 0.24 when the conversion is right.
    assert 0.18 < told_true < 0.30
    # With the discount's cap the differences are converted as if the noise were half as correlated:
    # sqrt(2 (1 - 0.5)) / sqrt(2 (1 - 0.85)) = 1.8 times too narrow, and a spell never shows.
    assert told_cap < 0.65 * told_true


def test_the_baseline_hands_the_spell_the_autocorrelation_up_to_its_own_limit():
    det = SeriesDetector(DetectorSettings(metric="ttft_ms", kind="regression", min_change=0.5))
    rng = random.Random(3)
    for i, x in enumerate(ar1(rng, 3 * 288, 0.85, 0.1)):
        det.observe(EPOCH_S + i * STEP_S, 500.0 * math.exp(x))
    base = det._impl.base
    assert base.autocorrelation() == MAX_PHI  # the evidence discount stays capped
    assert 0.7 < base.autocorrelation(limit=SPELL_MAX_PHI) <= SPELL_MAX_PHI


def spells_paged(seeds: range) -> int:
    """Alarms over series of quiet AR(1) noise (phi 0.85, sd 10%) with a 3-hour spell 3.5x as wide, no shift."""
    alarms = 0
    for seed in seeds:
        rng = random.Random(seed)
        calm = ar1(rng, 3 * 288, 0.85, 0.1)
        spell = [calm[-1] * 0.85 ** (k + 1) + s for k, s in enumerate(ar1(rng, 36, 0.85, 0.35))]
        det = SeriesDetector(DetectorSettings(metric="ttft_ms", kind="regression", min_change=0.5))
        for i, x in enumerate(calm + spell + ar1(rng, 72, 0.85, 0.1)):
            alarms += det.observe(EPOCH_S + i * STEP_S, 500.0 * math.exp(x)).alarm_started
    return alarms


def test_a_spell_of_strongly_correlated_noise_pages_less_than_with_the_capped_conversion(monkeypatch):
    now = spells_paged(range(40))
    monkeypatch.setattr("monitor.alerts.detectors.regression.SPELL_MAX_PHI", MAX_PHI)
    capped = spells_paged(range(40))
    assert now <= 0.7 * capped, f"{now} spells paged, {capped} with the spell told phi at most {MAX_PHI}"
