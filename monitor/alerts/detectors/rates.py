"""`threshold` rules (a percentile or the error rate over a window) and `regression` on error_rate.

Thresholds are deliberately literal: the value on the dashboard for the same
window crossing the bound is what fires them, so users can reason about
them. Percentiles interpolate linearly between order statistics (numpy's
default). A latency threshold is evaluated at each successful probe; an
error-rate rule at every probe, a failed one (value None) counting as an
error. To resolve, the value must be back past the bound by
`threshold_clear_margin` (20%: under 16% for an `above: 20%` rule) for
`resolve_after` evaluations: a rate hovering at the bound would otherwise
page, resolve and page again within one incident.
"""

from __future__ import annotations

import bisect
import math
from collections import deque
from typing import Any

from monitor.alerts.detectors.base import FIRING, OK, DetectorSettings, Evaluation, Lifecycle
from monitor.alerts.detectors.stats import binom_sf, quantile_sorted

STATE_VERSION = 1
MAX_SAMPLES = 4096
BUCKET_S = 600.0  # error-rate baselines are kept as 10-minute counts: a day is 144 small rows


class _Window:
    """(timestamp, value) pairs of the last `span_s` seconds (at most MAX_SAMPLES), kept sorted and summed too."""

    def __init__(self, span_s: float, items: Any = ()) -> None:
        self.span_s = span_s
        self.items: deque[tuple[float, float]] = deque()
        self.sorted: list[float] = []
        self.total = 0.0
        for t, v in items:
            self.add(float(t), float(v))

    def __len__(self) -> int:
        return len(self.items)

    def add(self, ts: float, value: float) -> list[tuple[float, float]]:
        """Append; return the pairs that fell out of the window."""
        self.items.append((ts, value))
        bisect.insort(self.sorted, value)
        self.total += value
        gone = []
        while self.items and (self.items[0][0] <= ts - self.span_s or len(self.items) > MAX_SAMPLES):
            old = self.items.popleft()
            del self.sorted[bisect.bisect_left(self.sorted, old[1])]
            self.total -= old[1]
            gone.append(old)
        if not self.items:
            self.total = 0.0
        return gone

    def to_state(self) -> list[list[float]]:
        return [[t, v] for t, v in self.items]


class _Detector:
    kind = ""

    def __init__(self, settings: DetectorSettings) -> None:
        self.settings = settings
        self.window = _Window(settings.window_s)
        self.life = Lifecycle(settings.for_evaluations, settings.resolve_after)

    def to_state(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "kind": self.kind,
            "window": self.window.to_state(),
            "life": self.life.to_state(),
        }

    def _load(self, state: dict[str, Any]) -> bool:
        if not isinstance(state, dict) or state.get("version") != STATE_VERSION or state.get("kind") != self.kind:
            return False
        self.window = _Window(self.settings.window_s, state.get("window", []))
        self.life.load(state.get("life", {}))
        return True

    @classmethod
    def from_state(cls, settings: DetectorSettings, state: dict[str, Any]):
        det = cls(settings)
        if not det._load(state):
            return cls(settings)
        return det

    def _bound(self) -> float | None:
        return self.settings.above if self.settings.above is not None else self.settings.below

    def _crosses(self, value: float) -> bool:
        s = self.settings
        return (s.above is not None and value > s.above) or (s.below is not None and value < s.below)

    def _clear(self, value: float) -> bool:
        s = self.settings
        m = s.threshold_clear_margin
        return (s.above is None or value <= s.above * (1 - m)) and (s.below is None or value >= s.below * (1 + m))


class ThresholdDetector(_Detector):
    """A percentile of the metric over `window_s`, against `above` or `below`."""

    kind = "threshold"

    def observe(self, ts: float, value: float | None) -> Evaluation:
        if value is None or not math.isfinite(value):
            return Evaluation(ts, self.life.state, evaluated=False, baseline=self._bound())
        self.window.add(ts, value)
        if len(self.window) < self.settings.min_samples:
            return Evaluation(ts, self.life.state, evaluated=False, baseline=self._bound())
        level = quantile_sorted(self.window.sorted, self.settings.percentile / 100.0)
        condition = self._crosses(level)
        started, resolved = self.life.step(condition, self._clear(level))
        return Evaluation(ts, self.life.state, condition, True, started, resolved, value=level, baseline=self._bound())


class ErrorRateThreshold(_Detector):
    """failed / total over `window_s` (at least `min_samples` probes), against `above` or `below`."""

    kind = "error_threshold"

    def observe(self, ts: float, value: float | None) -> Evaluation:
        self.window.add(ts, 1.0 if value is None else 0.0)
        n = len(self.window)
        if n < self.settings.min_samples:
            return Evaluation(ts, self.life.state, evaluated=False, baseline=self._bound())
        rate = round(self.window.total) / n
        condition = self._crosses(rate)
        started, resolved = self.life.step(condition, self._clear(rate))
        return Evaluation(ts, self.life.state, condition, True, started, resolved, value=rate, baseline=self._bound())


class ErrorRateRegression(_Detector):
    """A sustained rise of the error rate over `window_s` against the trailing `baseline_window_s`.

    Raises when the recent rate is above bound = max(base x (1 + min_change),
    base + error_floor) and a binomial test says the excess is not luck
    (P(X >= failures | n, bound) <= error_alpha). The baseline rate is
    (failures + 1) / (probes + 2): a clean day is not evidence of a 0% rate,
    and the absolute floor keeps 0% -> 1% from paging anyone. Clears when the
    recent rate is back at or under the bound. Same quarantine and new-normal
    policy as the latency regression (regression.py).
    """

    kind = "error_regression"

    def __init__(self, settings: DetectorSettings) -> None:
        super().__init__(settings)
        self.buckets: deque[list[float]] = deque()  # [start_ts, probes, failures]
        self.base_n = self.base_f = 0.0  # their sums
        self.held = [0.0, 0.0]  # quarantined probes, failures
        self.fired_ts: float | None = None

    def observe(self, ts: float, value: float | None) -> Evaluation:
        s = self.settings
        for old_ts, failed in self.window.add(ts, 1.0 if value is None else 0.0):
            self._retire(old_ts, failed)
        if self.life.state != FIRING:
            while self.buckets and self.buckets[0][0] < ts - s.baseline_window_s:
                _, probes, failed = self.buckets.popleft()
                self.base_n -= probes
                self.base_f -= failed
        n, base_n, base_f = len(self.window), self.base_n, self.base_f
        if n < s.min_samples or base_n < s.min_samples:
            return Evaluation(ts, self.life.state, evaluated=False)
        failures = round(self.window.total)
        prior = (base_f + 1) / (base_n + 2)
        bound = max(prior * (1 + s.min_change), prior + s.error_floor)
        rate = failures / n
        raising = rate > bound and binom_sf(failures, n, bound) <= s.error_alpha
        clear = rate <= bound
        before = self.life.state
        started, resolved = self.life.step(raising, clear)
        new_normal = False
        if before != OK and self.life.state == OK and not resolved:  # pending that went away
            self._add(ts, *self.held)
            self.held = [0.0, 0.0]
        if started:
            self.fired_ts = ts
        elif resolved:
            self.held, self.fired_ts = [0.0, 0.0], None
        elif self.life.state == FIRING and self.fired_ts is not None and ts - self.fired_ts >= s.accept_after_s:
            self.buckets = deque([[ts, *self.held]]) if self.held[0] else deque()
            self.base_n, self.base_f = self.held
            self.held, self.fired_ts = [0.0, 0.0], None
            self.life.reset()
            resolved = new_normal = True
        condition = (not clear) if before == FIRING else raising
        return Evaluation(
            ts, self.life.state, condition, True, started, resolved, new_normal, value=rate, baseline=base_f / base_n
        )

    def _retire(self, ts: float, failed: float) -> None:
        if self.life.state == OK:
            self._add(ts, 1.0, failed)
        else:
            self.held[0] += 1
            self.held[1] += failed

    def _add(self, ts: float, probes: float, failures: float) -> None:
        if probes <= 0:
            return
        self.base_n += probes
        self.base_f += failures
        if self.buckets and ts - self.buckets[-1][0] < BUCKET_S:
            self.buckets[-1][1] += probes
            self.buckets[-1][2] += failures
        else:
            self.buckets.append([ts, probes, failures])

    def to_state(self) -> dict[str, Any]:
        state = super().to_state()
        state.update(buckets=[list(b) for b in self.buckets], held=list(self.held), fired_ts=self.fired_ts)
        return state

    def _load(self, state: dict[str, Any]) -> bool:
        if not super()._load(state):
            return False
        self.buckets = deque([float(t), float(n), float(f)] for t, n, f in state.get("buckets", []))
        self.base_n = sum(b[1] for b in self.buckets)
        self.base_f = sum(b[2] for b in self.buckets)
        self.held = [float(v) for v in state.get("held", [0.0, 0.0])]
        self.fired_ts = None if state.get("fired_ts") is None else float(state["fired_ts"])
        return True
