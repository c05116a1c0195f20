"""What is normal for one series: the regression detector's baseline (see regression.py).

Works in the detector's frame: log of the metric, negated for tps, so up is
always bad. Holds the newest samples (kept out of the baseline), the
trailing window of deseasonalised baseline samples, the quarantine of
samples seen while a shift is being judged, the daily profile, the noise
scale and the long level. Every buffer is bounded, and the whole state is a
JSON-able dict.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

from monitor.alerts.detectors.base import DetectorSettings
from monitor.alerts.detectors.hourly_noise import HourlyNoise
from monitor.alerts.detectors.seasonal import DailyProfile, cycle_offset
from monitor.alerts.detectors.stats import SortedWindow, clipped_abs_mean_factor, median

MAX_SAMPLES = 4096  # memory bound for every buffer, whatever the sampling rate
MIN_EVALUATE = 20  # baseline samples before an evaluation (before the first whole day: min_baseline_samples)
# Until a day is learned the trailing median lags the daily cycle; the level's move across the baseline
# window (newer half vs older half) estimates that lag, doubled because the newest samples sit a further
# half-window ahead. Measured: halves the false alarms of a new target's first two days.
WARMUP_DRIFT = 2.0
VALUE_SAMPLES = 5  # outside a shift, `value` is the median of this many newest samples
SCALE_CLIP = 2.0
SCALE_MEMORY = 400
SCALE_FLOOR = 0.02  # 2%: below this, differences are timer resolution, not noise
IQR_WEIGHT = 0.8  # the window IQR overrides the running scale only when clearly larger
PROFILE_CLIP = 3.0  # a spike reaches the daily profile as at most 3 sds
# Neighbouring probes are alike (a provider's load moves slower than the sampling): the residuals'
# lag-1 autocorrelation phi makes a CUSUM's sum (1+phi)/(1-phi) times as variable as it assumes, so
# noise alone reaches the thresholds far more often. Estimated on clipped residuals entering the
# baseline; capped. The regression detector discounts each sample's evidence by it.
MAX_PHI = 0.5  # 0.3 looked better on a quarter of the tune seeds, worse on all of them (F1 0.904 vs 0.919)
_SCALE_FACTOR = clipped_abs_mean_factor(SCALE_CLIP)


class Baseline:
    def __init__(self, settings: DetectorSettings, smallest_shift: float) -> None:
        self.settings = settings
        self.smallest_shift = smallest_shift
        self.window_s = min(settings.level_window_s, settings.baseline_window_s)
        self.recent: deque[tuple[float, float]] = deque()
        self.window = SortedWindow(MAX_SAMPLES)  # (ts, x - daily offset)
        self.quarantine: deque[tuple[float, float]] = deque(maxlen=MAX_SAMPLES)
        self.profile = DailyProfile()
        self.scale_mean, self.scale_n = 0.0, 0
        self.hourly = HourlyNoise()  # the noise's daily shape: wider at a provider's peak hours
        self.last_scale = 0.0
        self.long_level, self.long_ts = 0.0, None
        self.ac_cross, self.ac_square, self.prev_resid = 0.0, 0.0, None  # running lag-1 moments

    # ------------------------------------------------------------ samples
    def push(self, ts: float, x: float, judging: bool, suspect: bool = False) -> None:
        """A new sample; the oldest recent one moves on: to quarantine while judging, else to the baseline.

        `suspect`: the detector's evidence for a shift is building up, so the sample may belong to one:
        it joins the level window but does not teach the noise model (see `_learn`)."""
        if len(self.recent) >= self.settings.recent_samples:
            old = self.recent.popleft()
            if judging:
                self.quarantine.append(old)
            else:
                self._learn(*old, noise=not suspect)
        self.recent.append((ts, x))

    def prune(self, ts: float) -> None:
        """Age the window out (not while firing: then it is the frozen reference)."""
        self.window.prune(ts - self.window_s, self.settings.min_baseline_samples)

    def ready(self) -> bool:
        return len(self.window) >= (MIN_EVALUATE if self.profile.active else self.settings.min_baseline_samples)

    def _learn(self, ts: float, x: float, noise: bool = True) -> None:
        offset = self.profile.offset(ts)
        if len(self.window) >= MIN_EVALUATE:
            level, scale = self.window.median(), self.last_scale or self.scale()
            resid = x - offset - level
            if noise:
                self._learn_noise(ts, resid, scale)
            else:
                # A sample of a shift that may be building up: its residual is the shift, not noise. Learned,
                # it would widen the scale and, run after run, read as correlated noise (on white noise with
                # 1.5x steps phi read above 0 in 65% of evaluations), blunting the charts against the very
                # shifts they are slow to catch.
                self.prev_resid = None
            clipped = offset + level + max(-PROFILE_CLIP * scale, min(PROFILE_CLIP * scale, resid))
            old_coef = self.profile.coef
            if self.profile.add(ts, clipped):
                self._reseason(old_coef)
                offset = self.profile.offset(ts)
        self.window.add(ts, x - offset)
        if len(self.window) >= MIN_EVALUATE:
            # A time-weighted running mean of the trailing level over `baseline_window_s`.
            now = self.window.median()
            weight = 1.0 if self.long_ts is None else min(1.0, (ts - self.long_ts) / self.settings.baseline_window_s)
            self.long_level += weight * (now - self.long_level)
            self.long_ts = ts

    def _learn_noise(self, ts: float, resid: float, scale: float) -> None:
        """The running noise scale, its daily shape and lag-1 autocorrelation, from one residual."""
        self.scale_n += 1
        clipped = min(abs(resid), SCALE_CLIP * scale)
        self.scale_mean += (clipped - self.scale_mean) / min(self.scale_n, SCALE_MEMORY)
        self.hourly.add(ts, clipped)
        bounded = max(-SCALE_CLIP * scale, min(SCALE_CLIP * scale, resid))
        if self.prev_resid is not None:
            memory = min(self.scale_n, SCALE_MEMORY)
            self.ac_cross += (bounded * self.prev_resid - self.ac_cross) / memory
            self.ac_square += (bounded * bounded - self.ac_square) / memory
        self.prev_resid = bounded

    def _reseason(self, old_coef: list[float]) -> None:
        """A day was learned: restate the stored window under the new daily offsets.

        The long level moves with the trailing median, so the gap between them (an improvement
        or not) is what it was; restating changes the frame, not the data.
        """
        before = self.window.median()
        items = list(self.window.items)
        self.window.clear()
        for t, y in items:
            self.window.add(t, y + cycle_offset(old_coef, t) - self.profile.offset(t))
        self.long_level += self.window.median() - before

    # ---------------------------------------------------------- estimates
    def level(self, ts: float) -> float:
        """The expected value at `ts`: the baseline level plus the daily cycle.

        The level is the trailing median, but never more than half the smallest shift under
        the long level (a running mean over `baseline_window_s`): after a spell of
        better-than-usual latency the trailing median follows it down, and the return to the
        usual level would otherwise read as a regression.
        """
        level = self.window.median()
        if self.long_ts is not None:
            level = max(level, self.long_level - self.smallest_shift / 2)
        return level + self.profile.offset(ts)

    def scale(self) -> float:
        window = self.window.iqr_sigma() if len(self.window) >= 8 else 0.0
        scale = window
        if self.scale_n >= MIN_EVALUATE:
            scale = max(self.scale_mean * _SCALE_FACTOR, IQR_WEIGHT * window)
        if not self.profile.active:
            drift = self.window.drift()
            scale = math.sqrt(scale * scale + (WARMUP_DRIFT * drift) ** 2)
        self.last_scale = max(scale, SCALE_FLOOR)
        return self.last_scale

    def scale_at(self, ts: float) -> float:
        """The noise scale to weigh a sample at `ts` against: the long scale, widened at the day's noisy hours."""
        return self.scale() * self.hourly.ratio(ts)

    def autocorrelation(self, limit: float = MAX_PHI) -> float:
        """The residuals' lag-1 autocorrelation, in [0, limit] (0 until it is known)."""
        if self.scale_n < MIN_EVALUATE or self.ac_square <= 0.0:
            return 0.0
        phi = self.ac_cross / self.ac_square
        # Independent noise still estimates phi at about +-1/sqrt(n): discounting on that would
        # only slow detection. Below two standard errors it is taken as no correlation.
        if phi < 2.0 / math.sqrt(min(self.scale_n, SCALE_MEMORY)):
            return 0.0
        return min(limit, phi)

    def recent_median(self, since_ts: float | None) -> float:
        """Median of the recent samples since `since_ts` (the newest few when None)."""
        if since_ts is None:
            newest = [x for _, x in list(self.recent)[-VALUE_SAMPLES:]]
        else:
            newest = [x for t, x in self.recent if t >= since_ts] or [self.recent[-1][1]]
        return median(newest)

    def still_shifted(self, ts: float) -> bool:
        """Are the recent samples nearer the smallest shift than the baseline?"""
        level = self.level(ts) - self.profile.offset(ts)
        return median([x - level - self.profile.offset(t) for t, x in self.recent]) >= self.smallest_shift / 2

    # ------------------------------------------------------ after judging
    def release_quarantine(self) -> None:
        """A false start: the held samples were normal after all."""
        held = list(self.quarantine)
        self.quarantine.clear()
        for ts, x in held:
            self._learn(ts, x)

    def forget_shift(self, keep_recent: int) -> None:
        """Recovered: the shifted samples never reach the baseline; the newest `keep_recent` were clear."""
        self.quarantine.clear()
        self.recent = deque(list(self.recent)[-keep_recent:])

    def accept_shift(self) -> None:
        """The new normal: the held samples become the baseline."""
        self.window.clear()
        for ts, x in self.quarantine:
            self.window.add(ts, x - self.profile.offset(ts))
        self.quarantine.clear()

    # -------------------------------------------------------- persistence
    def to_state(self) -> dict[str, Any]:
        return {
            "recent": [[t, x] for t, x in self.recent],
            "window": self.window.to_state(),
            "quarantine": [[t, x] for t, x in self.quarantine],
            "profile": self.profile.to_state(),
            "scale": [self.scale_mean, self.scale_n, self.last_scale],
            "long": [self.long_level, self.long_ts],
            "autocorrelation": [self.ac_cross, self.ac_square, self.prev_resid],
            "hourly_noise": self.hourly.to_state(),
        }

    def load(self, state: dict[str, Any]) -> None:
        self.recent = deque((float(t), float(x)) for t, x in state.get("recent", []))
        self.window = SortedWindow.from_state(MAX_SAMPLES, state.get("window", []))
        self.quarantine.clear()
        self.quarantine.extend((float(t), float(x)) for t, x in state.get("quarantine", []))
        self.profile = DailyProfile.from_state(state.get("profile", {}))
        scale_mean, scale_n, last_scale = state.get("scale", [0.0, 0, 0.0])
        self.scale_mean, self.scale_n, self.last_scale = float(scale_mean), int(scale_n), float(last_scale)
        long_level, long_ts = state.get("long", [0.0, None])
        self.long_level, self.long_ts = float(long_level), None if long_ts is None else float(long_ts)
        # Absent in checkpoints written before it existed: then learned afresh, from no correlation.
        cross, square, prev = state.get("autocorrelation", [0.0, 0.0, None])
        self.ac_cross, self.ac_square = float(cross), float(square)
        self.prev_resid = None if prev is None else float(prev)
        self.hourly.load(state.get("hourly_noise"))
