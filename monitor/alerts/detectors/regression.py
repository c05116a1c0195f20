"""`regression`: a sustained shift of one series against its own baseline.

Per observation, in log space (latency noise is multiplicative: a log makes
it roughly normal and a 2x shift the same distance at 200 ms as at 2 s;
`tps` is negated so that up is always bad):

1. The daily cycle is divided out (`seasonal.DailyProfile`, learned from
   whole days; until the first day is learned the scale is widened by how
   far the level moved across the baseline window, and evaluation waits
   for `min_baseline_samples`).
2. Baseline level = median of the trailing `level_window_s` (2 h, stretched
   back to at least `min_baseline_samples`), leaving out the newest
   `recent_samples`, which may already belong to a shift — but never more
   than half the smallest shift under the long level (a running mean over
   `baseline_window_s`), so the return from a spell of better-than-usual
   latency does not read as a regression. Noise scale = a long running mean
   of |residual| clipped at 2 sds, never below 0.8x the window's IQR (so a
   noisier series raises it at once), widened at the hours of the day whose
   noise is wider than the day's (`hourly_noise.py`: a provider's peak
   hours), and never below the noise of the last two hours read from
   neighbouring samples' differences (`spell.py`: a noisy spell of an hour,
   which a running mean misses and a shift barely moves).
3. Evidence: a bank of CUSUM charts, one per shift size from `min_change`
   up to 100x in steps of 1.3x in log. Each adds the log-likelihood ratio
   of "level shifted by mu" against "no shift" under a normal noise
   contaminated by spikes (`stats.mixture_llr`): a spike far from every
   hypothesis adds almost nothing, and no sample can add more than about
   5 nats, whatever its size.
4. Raise when any chart passes its threshold: `h_fast` (7.75) for shifts of
   2.4-4 noise sds; `h_slow` (11) for smaller shifts, which have long
   memory and so more chances to drift up; `h_big` (12) for shifts of 4+
   sds or 3x and more, where each sample looks like a spike and three
   spikes that happen to agree must not page. Evidence is not effect: a
   chart's alarm must also show 0.8 x min_change in the median since the
   change began (all of it until a day is learned), or a plateau's edge a
   fraction of min_change high would page once it had lasted long enough.
   Beside the charts, an adaptive chart (`adaptive.py`) tests the shift
   size the samples themselves show, with its own noise, against AR(1)
   noise (on a quiet series a level between two of the bank's sizes is
   otherwise several noise widths from both, and each sample looks like a
   spike); and a fast path (`sustained.py`) raises when the newest
   three samples are all 2 noise sds (more on autocorrelated noise) and
   0.8 x min_change above the baseline and alike but for one spike: the
   charts, which discount each sample for correlated noise and cap it as a
   possible spike, take five or six samples over a large shift.
   `for_evaluations` consecutive raising evaluations, and the shift having
   held `min_duration` (unset: two sampling intervals) since it began, make
   it fire: a single spike can raise a chart for one evaluation at most, the
   next ordinary sample takes it back down.
5. While pending or firing, samples leaving the recent window go to a
   quarantine instead of the baseline, and the baseline is frozen: a shift
   never becomes its own reference while it is being judged. Before that,
   while any chart is half way to its threshold, they join the level but
   not the noise scale or its autocorrelation: a shift still building up
   would otherwise read as wider, correlated noise and blunt the charts
   against the very shifts they are slow to catch.
6. Resolution: a second CUSUM weighs "back at the baseline" against "still
   at least `min_change` up"; the condition is clear while it is above
   `h_recover`, and `resolve_after` clear evaluations in a row resolve.
   Raising and clearing are different tests, so the alert does not flap at
   the edge of `min_change`.
7. Baseline restart: an alert still firing after `accept_after_s` (2 h)
   resolves. If the newest samples are still nearer the shifted level than
   the old baseline, the shift is the new normal (`new_normal=True`): the
   quarantined samples become the baseline and later changes are judged
   against them. Otherwise it recovered (too gradually for step 6) and the
   quarantine is thrown away, as it is after any recovery.

Failed probes (no value) are not evaluated: they count in `error_rate`
rules only.
"""

from __future__ import annotations

import math
from itertools import pairwise
from typing import Any

from monitor.alerts.detectors.adaptive import AdaptiveChart
from monitor.alerts.detectors.base import FIRING, OK, PENDING, DetectorSettings, Evaluation, Lifecycle
from monitor.alerts.detectors.baseline import Baseline
from monitor.alerts.detectors.spell import MAX_PHI as SPELL_MAX_PHI
from monitor.alerts.detectors.spell import NoisySpell
from monitor.alerts.detectors.stats import median, mixture_llr
from monitor.alerts.detectors.sustained import SAMPLES, SPIKE_LOG, sustained_shift

STATE_VERSION = 1
GRID_RATIO = 1.3
MAX_SHIFT = math.log(100.0)
SLOW_SDS, BIG_SDS = 2.4, 4.0
# The thresholds are set for 1-minute sampling. What on-call feels is false alarms per month, and at
# 5-minute sampling noise gets a fifth of the chances to line up; so each threshold is lowered by
# 0.5 nats per e-fold of sampling interval (raised for faster sampling), clamped to 2 nats. The
# benchmark shows equal false alarms per target-month at 1 and 5 minutes with this.
REFERENCE_INTERVAL_S = 60.0
EASE_PER_LOG_INTERVAL = 0.5
EASE_LIMIT = 2.0
# An alarm must show this share of min_change in the median since the change began (evidence is not
# effect: see observe). 0.8 on the tune seeds: 0.7 let plateau edges through, 0.9 cost recall at sd 0.3.
EFFECT_SHARE = 0.8
# A chart this far to its threshold marks the samples leaving the recent window as a possible shift
# (see observe, step 5): half, so noise alone seldom gets there and a shift of min_change soon does.
SUSPECT_SHARE = 0.5
# Unset min_duration: a shift must have held this many sampling intervals (three probes at the new level).
DEFAULT_HOLD_INTERVALS = 2


def shift_grid(min_change: float) -> list[float]:
    """Shift sizes (log) one chart each: from log(1 + min_change) up, 1.3x apart."""
    mu = math.log1p(max(min_change, 0.01))
    out = [mu]
    while out[-1] * GRID_RATIO <= MAX_SHIFT:
        out.append(out[-1] * GRID_RATIO)
    return out


class RegressionDetector:
    def __init__(self, settings: DetectorSettings) -> None:
        self.settings = settings
        self.sign = 1.0 if settings.up_is_bad else -1.0
        self.mus = shift_grid(settings.min_change)
        self.base = Baseline(settings, self.mus[0])
        self.charts = [0.0] * len(self.mus)
        self.run_start = [0.0] * len(self.mus)  # timestamp each chart last rose from zero
        self.adaptive = AdaptiveChart()  # a shift size and its noise from the data (adaptive.py)
        self.spell = NoisySpell()  # the noise as it is now (spell.py)
        self.change_ts: float | None = None  # where the shift being judged began: `value` is its median
        self.recovery = 0.0
        self.fired_ts: float | None = None
        self.life = Lifecycle(settings.for_evaluations, settings.resolve_after)

    def observe(self, ts: float, value: float | None) -> Evaluation:
        base, life = self.base, self.life
        if value is None or not math.isfinite(value) or value <= 0:
            expected = math.exp(self.sign * base.level(ts)) if base.ready() else None
            return Evaluation(ts, life.state, evaluated=False, baseline=expected)
        x = self.sign * math.log(value)
        judging = life.state != OK
        base.push(ts, x, judging=judging, suspect=not judging and self._accumulating())
        if life.state != FIRING:
            base.prune(ts)
        if not base.ready():
            return Evaluation(ts, life.state, evaluated=False, value=self._value())

        level = base.level(ts)
        if life.state == OK and not self._accumulating():
            self.spell.push(x - level)
        else:
            self.spell.skip(x - level)  # a shift building up or being judged is not noise (step 5)
        # The spell converts differences to noise width with the series' own autocorrelation, not the
        # evidence discount's cap (0.5): at phi 0.85 the cap read a spell 1.8x too narrow, and on
        # `synthetic_g` 132 of its 149 false alarms were on series with phi 0.6 or more.
        scale = self.spell.scale(base.scale_at(ts), base.autocorrelation(limit=SPELL_MAX_PHI))
        if life.state == OK and x - level < self.mus[0] / 2 and not any(self.charts) and not self.adaptive.active():
            # Every chart is at zero and this sample is nearer "no shift" than any shift, so every
            # log-likelihood ratio is negative: nothing can move.
            raising, llr = False, []
            self.adaptive.prev = x - level
        else:
            llr = mixture_llr(x - level, self.mus, scale, self.settings.spike_weight, self.settings.spike_density)
            phi = base.autocorrelation()
            if phi > 0.0:
                # Correlated noise: a sum of n residuals is (1 + phi) / (1 - phi) times as variable as
                # n independent ones, so each sample is worth that much less evidence. On the second
                # generator (phi 0.25) this took false alarms from 12 to ~1.5 a target-month. It slows
                # large shifts too, which the fast path (sustained.py) catches instead.
                inflation = (1.0 + phi) / (1.0 - phi)
                llr = [gain / inflation for gain in llr]
            raising = self._update_charts(llr, scale, ts)
            if self._update_adaptive(x - level, scale, phi, ts) and not raising:
                raising = True
                if life.state == OK:
                    self.change_ts = self.adaptive.start_ts
            if raising and life.state == OK:
                # Evidence is not effect: a CUSUM adds up any steady excess however small, so a plateau's
                # edge or a weekend's lower level, a fraction of min_change, reaches its threshold too. An
                # alarm must show most of min_change in the median since the change began (all of it
                # until a day is learned, while the baseline lags the daily cycle).
                gate = EFFECT_SHARE if base.profile.active else 1.0
                raising = base.recent_median(self.change_ts) - level >= gate * self.mus[0]
            if not raising and life.state != FIRING:
                raising = self._sustained(scale)
        clear = False
        if life.state == FIRING:
            # Evidence for "back at the baseline" against "still min_change up": minus the smallest chart's ratio.
            self.recovery = max(0.0, self.recovery - llr[0])
            clear = self.recovery >= self.settings.h_recover
        before = life.state
        life.min_duration_s = self._min_duration()
        started, resolved = life.step(raising, clear, ts, since=self.change_ts)
        new_normal = False
        if before == PENDING and life.state == OK:
            base.release_quarantine()
        if started:
            self.fired_ts, self.recovery = ts, 0.0
        elif resolved:
            self._recovered()
        elif life.state == FIRING and self.fired_ts is not None and ts - self.fired_ts >= self.settings.accept_after_s:
            # Firing for accept_after_s: if the level is still shifted it is the new normal; if it is
            # nearer the old baseline than the smallest shift (a recovery too gradual for the recovery
            # test), it recovered. Either way the alert resolves and the baseline restarts.
            new_normal = base.still_shifted(ts)
            if new_normal:
                base.accept_shift()
                self._reset_charts()
            else:
                self._recovered()
            life.reset()
            resolved = True
        condition = (not clear) if before == FIRING else raising
        return Evaluation(
            ts,
            life.state,
            condition=condition,
            alarm_started=started,
            resolved=resolved,
            new_normal=new_normal,
            short_run_s=life.short_run_s,
            value=self._value(),
            baseline=math.exp(self.sign * level),
        )

    def _update_charts(self, llr: list[float], scale: float, ts: float) -> bool:
        s = self.settings
        raising, best = False, 0.0
        ease = self._ease()
        for j, (mu, gain) in enumerate(zip(self.mus, llr, strict=True)):
            # A shift as large as a spike (3x) gets the spike threshold whatever the noise: a run of spikes.
            big = mu >= BIG_SDS * scale or mu >= SPIKE_LOG
            h = (s.h_slow if mu < SLOW_SDS * scale else s.h_big if big else s.h_fast) - ease
            if self.charts[j] <= 0.0:
                self.run_start[j] = ts
            total = max(0.0, self.charts[j] + gain)
            if total >= h:
                raising = True
                if self.life.state == OK and total / h > best:  # the chart that raises first dates the change
                    best, self.change_ts = total / h, self.run_start[j]
            self.charts[j] = min(total, 2 * h)  # capped, so old evidence cannot keep an alarm up forever
        return raising

    def _update_adaptive(self, d: float, scale: float, phi: float, ts: float) -> bool:
        """The adaptive chart (adaptive.py), on the spike threshold: its shift is whatever the data say."""
        s = self.settings
        h = s.h_big - self._ease()
        value = self.adaptive.update(d, ts, self.mus[0], scale, phi, s.spike_weight, s.spike_density)
        self.adaptive.value = min(value, 2 * h)
        return value >= h

    def _accumulating(self) -> bool:
        """Is some chart half way to its threshold? Then a shift may be building up."""
        return any(c >= SUSPECT_SHARE * self.settings.h_slow for c in self.charts)

    def _sustained(self, scale: float) -> bool:
        """The fast path (sustained.py): the newest samples all well above the baseline band."""
        base = self.base
        newest = list(base.recent)[-SAMPLES:]
        residuals = [x - base.level(t) for t, x in newest]
        gate = EFFECT_SHARE if base.profile.active else 1.0
        if not sustained_shift(residuals, scale, gate * self.mus[0], base.autocorrelation()):
            return False
        if self.life.state == OK:
            self.change_ts = newest[0][0]
        return True

    def _min_duration(self) -> float:
        """The rule's min_duration, else two sampling intervals (three probes at the new level)."""
        if self.settings.min_duration_s is not None:
            return self.settings.min_duration_s
        return DEFAULT_HOLD_INTERVALS * (self._interval() or 0.0)

    def _interval(self) -> float | None:
        """The recent sampling interval (median gap between the newest samples); None until there are three."""
        times = [t for t, _ in self.base.recent]
        return median([b - a for a, b in pairwise(times)]) if len(times) >= 3 else None

    def _ease(self) -> float:
        """How much lower than at 1-minute sampling the thresholds are, from the recent sampling interval."""
        step = self._interval()
        if step is None:
            return 0.0
        ease = EASE_PER_LOG_INTERVAL * math.log(max(step, 1.0) / REFERENCE_INTERVAL_S)
        return min(max(ease, -EASE_LIMIT), EASE_LIMIT)

    def _value(self) -> float:
        """Median of the samples since the change while judging one, else of the newest few."""
        judging = self.life.state != OK and self.change_ts is not None
        return math.exp(self.sign * self.base.recent_median(self.change_ts if judging else None))

    def _recovered(self) -> None:
        self.base.forget_shift(keep_recent=self.settings.resolve_after)
        self._reset_charts()

    def _reset_charts(self) -> None:
        self.charts = [0.0] * len(self.mus)
        self.adaptive.reset()
        self.recovery, self.fired_ts, self.change_ts = 0.0, None, None

    # ---------------------------------------------------------- persistence
    def to_state(self) -> dict[str, Any]:
        """Plain JSON-able dict; `from_state` restores a detector that continues exactly where this one was."""
        return {
            "version": STATE_VERSION,
            "metric": self.settings.metric,
            "mus": list(self.mus),
            "baseline": self.base.to_state(),
            "charts": list(self.charts),
            "run_start": list(self.run_start),
            "adaptive": self.adaptive.to_state(),
            "spell": self.spell.to_state(),
            "change_ts": self.change_ts,
            "recovery": self.recovery,
            "fired_ts": self.fired_ts,
            "life": self.life.to_state(),
        }

    @classmethod
    def from_state(cls, settings: DetectorSettings, state: dict[str, Any]) -> RegressionDetector:
        """Restore; a state from another version or metric is ignored (the detector starts afresh)."""
        det = cls(settings)
        if (
            not isinstance(state, dict)
            or state.get("version") != STATE_VERSION
            or state.get("metric") != settings.metric
        ):
            return det
        det.base.load(state.get("baseline", {}))
        det.spell.load(state.get("spell"))
        if [float(m) for m in state.get("mus", [])] == det.mus:  # the rule's min_change is unchanged
            det.charts = [float(c) for c in state.get("charts", det.charts)]
            det.run_start = [float(t) for t in state.get("run_start", det.run_start)]
            det.adaptive.load(state.get("adaptive"))
            det.change_ts = None if state.get("change_ts") is None else float(state["change_ts"])
            det.recovery = float(state.get("recovery", 0.0))
            det.fired_ts = None if state.get("fired_ts") is None else float(state["fired_ts"])
            det.life.load(state.get("life", {}))
        else:
            det.base.quarantine.clear()  # nothing is being judged any more
        return det
