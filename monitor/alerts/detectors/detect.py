"""Alert detection (DESIGN §5, §7): one series in, one evaluation per point out.

Pure: values and timestamps in, values out; no clock, no I/O. The live
engine and `firsttoken backtest` drive the same `SeriesDetector` one
observation at a time, so a backtest replays exactly what the service does.

    det = SeriesDetector(settings_from_rule(rule))
    ev = det.observe(sample.started_at, sample.ttft_ms)   # None for a failed probe
    if ev.alarm_started: ...   # ev.value, ev.baseline in the metric's units
    row.state = det.to_state()   # JSON-able; SeriesDetector.from_state(settings, row.state) after a restart

For `error_rate` rules pass any number for a successful probe and None for a
failed one. Observations must come in time order; one older than the last
is ignored (evaluated=False), so a late sample cannot rewrite the windows.

The algorithms and their defaults are in `regression.py` (latency and tps
regressions) and `rates.py` (thresholds, error rate); the figures behind
the defaults come from `benchmarks/detection/`.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any, Protocol

from monitor.alerts.detectors.base import (
    CHANGE_METRICS,
    DAY_S,
    FIRING,
    METRICS,
    OK,
    PENDING,
    DetectorSettings,
    Evaluation,
)
from monitor.alerts.detectors.cache import HitRatioThreshold
from monitor.alerts.detectors.change import ChangeDetector
from monitor.alerts.detectors.rates import ErrorRateRegression, ErrorRateThreshold, ThresholdDetector
from monitor.alerts.detectors.regression import RegressionDetector

__all__ = [
    "FIRING",
    "METRICS",
    "OK",
    "PENDING",
    "DetectorSettings",
    "Evaluation",
    "RuleLike",
    "SeriesDetector",
    "default_settings",
    "settings_from_rule",
]


class RuleLike(Protocol):
    """The fields of `monitor.config.AlertRule` the detector reads."""

    metric: str
    kind: str
    min_change: float | None
    percentile: float | None
    above: float | None
    below: float | None
    window_s: float
    min_samples: int
    for_evaluations: int
    resolve_after: int
    baseline_window_s: float | None
    min_duration_s: float | None


def settings_from_rule(rule: RuleLike) -> DetectorSettings:
    """The rule's fields; anything unset takes the DetectorSettings default."""
    base = DetectorSettings()
    return DetectorSettings(
        metric=rule.metric,
        kind=rule.kind,
        cache_state=getattr(rule, "cache_state", None),
        min_change=base.min_change if rule.min_change is None else float(rule.min_change),
        percentile=base.percentile if rule.percentile is None else float(rule.percentile),
        above=rule.above,
        below=rule.below,
        window_s=float(rule.window_s),
        min_samples=int(rule.min_samples),
        for_evaluations=int(rule.for_evaluations),
        resolve_after=int(rule.resolve_after),
        baseline_window_s=DAY_S if rule.baseline_window_s is None else float(rule.baseline_window_s),
        min_duration_s=None if getattr(rule, "min_duration_s", None) is None else float(rule.min_duration_s),
    )


def default_settings(metric: str) -> DetectorSettings:
    """Built-in rule per metric when no config names one: the example config's choices."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; expected one of {', '.join(METRICS)}")
    if metric == "error_rate":
        return DetectorSettings(metric=metric, kind="threshold", above=0.2, window_s=900.0)
    return DetectorSettings(metric=metric, kind="regression", min_change=0.5)


class SeriesDetector:
    """One rule on one series (a target's metric), fed in time order."""

    def __init__(self, settings: DetectorSettings) -> None:
        self.settings = settings
        self._impl = _implementation(settings)
        self._last_ts = -math.inf

    @property
    def state(self) -> str:
        return self._impl.life.state

    @property
    def change_started_s(self) -> float | None:
        """Where the shift being judged began (epoch s); None when none is, or the detector does not date
        changes (only `regression` on latency or tps does)."""
        return getattr(self._impl, "change_ts", None)

    def observe(self, timestamp: float | datetime, value: float | str | None) -> Evaluation:
        """A number for a latency/tps/error_rate rule; a label (str) for a change rule."""
        ts = timestamp.timestamp() if isinstance(timestamp, datetime) else float(timestamp)
        if isinstance(value, str):
            value = value if self.settings.kind == "change" else None
        elif value is not None and (
            self.settings.kind == "change" or isinstance(value, bool) or not math.isfinite(value)
        ):
            value = None
        if ts < self._last_ts:
            return Evaluation(ts, self.state, evaluated=False)
        self._last_ts = ts
        return self._impl.observe(ts, value)

    def to_state(self) -> dict[str, Any]:
        return {"last_ts": self._last_ts if math.isfinite(self._last_ts) else None, "detector": self._impl.to_state()}

    @classmethod
    def from_state(cls, settings: DetectorSettings, state: dict[str, Any] | None) -> SeriesDetector:
        """Restore a detector; a missing or incompatible state gives a fresh one."""
        det = cls(settings)
        if isinstance(state, dict):
            det._impl = type(det._impl).from_state(settings, state.get("detector") or {})
            if state.get("last_ts") is not None:
                det._last_ts = float(state["last_ts"])
        return det


def _implementation(settings: DetectorSettings):
    if settings.kind == "change":
        if settings.metric not in CHANGE_METRICS:
            raise ValueError(f"unknown change metric {settings.metric!r}")
        return ChangeDetector(settings)
    if settings.metric not in METRICS:
        raise ValueError(f"unknown metric {settings.metric!r}")
    if settings.kind == "regression":
        return ErrorRateRegression(settings) if settings.metric == "error_rate" else RegressionDetector(settings)
    if settings.kind == "threshold":
        if settings.above is None and settings.below is None:
            raise ValueError("a threshold needs above or below")
        if settings.metric == "cache_hit_ratio":
            return HitRatioThreshold(settings)
        return ErrorRateThreshold(settings) if settings.metric == "error_rate" else ThresholdDetector(settings)
    raise ValueError(f"unknown kind {settings.kind!r}")
