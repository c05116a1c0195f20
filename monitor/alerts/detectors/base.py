"""Values shared by every detector: settings, one evaluation, and the alert lifecycle.

States (DESIGN §5): `ok` → `pending` (the condition holds, not yet for
`for_evaluations` evaluations in a row) → `firing` → back to `ok` once the
condition has been clear for `resolve_after` evaluations in a row. A pending
alert whose condition goes away returns to `ok` without ever notifying.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from monitor.sample import ALERT_METRICS, CACHE_ALERT_METRICS, CHANGE_METRICS, LATENCY_METRICS
from monitor.units import DAY_S, HOUR_S

METRICS = (*ALERT_METRICS, *CACHE_ALERT_METRICS)

OK, PENDING, FIRING = "ok", "pending", "firing"
__all__ = ["CHANGE_METRICS", "DAY_S", "HOUR_S", "LATENCY_METRICS", "METRICS"]  # re-exported for the detectors


@dataclass(frozen=True, slots=True)
class DetectorSettings:
    """Everything one detector needs, rule fields first, then tuning with tested defaults.

    Build it from a config rule with `settings_from_rule`; the tuning fields are
    what `benchmarks/detection/` measured (see that module for the figures).
    """

    metric: str = "ttft_ms"
    kind: str = "regression"  # regression | threshold | change
    cache_state: str | None = None  # cache probes: the half watched (see monitor.alerts.detectors.cache)
    min_change: float = 0.5  # regression: the smallest relative shift worth a page (0.5 = +50%; tps: -33%)
    percentile: float = 90.0  # threshold on a latency/tps percentile
    above: float | None = None  # threshold bound; error_rate as a fraction
    below: float | None = None
    window_s: float = 900.0  # threshold window; error_rate: the recent window
    min_samples: int = 5
    for_evaluations: int = 2
    resolve_after: int = 3
    # Regression: how long a shift must have held before it pages; a run of slow probes shorter than this is
    # never a page, whatever the evidence. Unset: two sampling intervals (three probes at the new level),
    # which the detector mostly needs anyway (at most a sample of delay on the benchmarks) and which keeps
    # a one- or two-probe blip from paging at any sampling rate. How long a slowdown must last is the user's.
    min_duration_s: float | None = None
    # How far back "normal" reaches: error_rate regression counts failures over it; the latency regression
    # keeps a running mean of its level over it (regression.py step 2) and caps its 2-hour level window by it.
    baseline_window_s: float = DAY_S
    # --- regression tuning (log-space units; see regression.py)
    level_window_s: float = 2 * HOUR_S  # trailing window for the current level
    min_baseline_samples: int = 48  # the level window stretches back until it holds this many
    recent_samples: int = 12  # newest samples kept out of the baseline: a shift must not teach itself
    h_slow: float = 11.0  # evidence (nats) to raise, charts for shifts under 2.4 noise sds
    # Charts for shifts of 2.4-4 noise sds (and under 3x). Was 7.25, for "2x within 3 samples", which is mostly
    # the fast path's now (sustained.py): 7.75 took the second generator's false alarms from 1.02 to 0.77 a
    # target-month (tune seeds); 8 to 0.67, but a 2x step at 1-minute sampling then paged a sample later.
    h_fast: float = 7.75
    h_big: float = 12.0  # charts for shifts of 4+ sds, where one sample looks like a spike
    h_recover: float = 4.0  # evidence that the level is back before an evaluation counts as clear
    spike_weight: float = 0.05  # prior share of spikes in the noise model
    spike_density: float = 0.2  # their spread above the level, per unit of log (5 units: ~150x)
    accept_after_s: float = 2 * HOUR_S  # an alert firing this long resolves: the shift becomes the new normal
    threshold_clear_margin: float = 0.2  # a threshold resolves only 20% back past its bound
    # --- error_rate regression
    error_floor: float = 0.05  # absolute rise an error rate needs before a page (0% -> 1% is not one)
    error_alpha: float = 0.005  # binomial test level for the rise

    @property
    def up_is_bad(self) -> bool:
        return self.metric != "tps"


@dataclass(frozen=True, slots=True)
class Evaluation:
    """What one observation did to one detector.

    `value` and `baseline` are in the metric's units (ms, tokens/s, or a
    fraction for error_rate). For a latency/tps `regression`: the median of
    the samples since the shift began (outside one, of the newest five) and
    the expected level now, its daily cycle included. For error_rate
    `regression`: the recent and the baseline error rate. For `threshold`:
    the windowed percentile or error rate, and the bound.
    """

    timestamp: float
    state: str
    condition: bool = False  # the raw condition at this point (regressed / over the bound)
    evaluated: bool = True  # False: nothing to judge here (a failed probe for a latency rule, warming up)
    alarm_started: bool = False  # this observation made the alert fire
    resolved: bool = False  # this observation resolved a firing alert
    new_normal: bool = False  # resolved because the shifted level became the baseline, not because it recovered
    # A pending run that ended without paging because it held for less than min_duration: how long it held (s).
    short_run_s: float | None = None
    value: float | None = None
    baseline: float | None = None
    # `kind: change` compares labels: the new value and the established one (change.py).
    value_text: str | None = None
    baseline_text: str | None = None


class Lifecycle:
    """pending → firing → resolved, counted in evaluations and, to fire, in time held (`min_duration_s`)."""

    __slots__ = ("for_evaluations", "held_s", "min_duration_s", "resolve_after", "run", "short_run_s", "since", "state")

    def __init__(
        self, for_evaluations: int, resolve_after: int, state: str = OK, run: int = 0, min_duration_s: float = 0.0
    ) -> None:
        self.for_evaluations = max(1, for_evaluations)
        self.resolve_after = max(1, resolve_after)
        self.min_duration_s = max(0.0, min_duration_s)
        self.state = state
        self.run = run  # pending: raising evaluations in a row; firing: clear evaluations in a row
        self.since: float | None = (
            None  # pending: when the condition began (the detector's dating, else the first raise)
        )
        self.held_s = 0.0  # pending: how long the condition had held at its latest raising evaluation
        self.short_run_s: float | None = None  # set by the step that ended a run too short to page

    def step(
        self, raising: bool, clear: bool, ts: float | None = None, since: float | None = None
    ) -> tuple[bool, bool]:
        """Advance by one evaluation; returns (alarm_started, resolved).

        `raising` is judged while ok or pending, `clear` while firing: the two
        may be different tests, so a detector can demand more evidence to page
        than to stay paged (no flapping around the edge of the condition).
        With `ts`, firing also waits until the condition has held `min_duration_s`
        since `since` (when the detector dates the change) or its first raising
        evaluation; a run that ends sooner leaves `short_run_s` set.
        """
        self.short_run_s = None
        if self.state == FIRING:
            self.run = self.run + 1 if clear else 0
            if self.run >= self.resolve_after:
                self.state, self.run = OK, 0
                return False, True
            return False, False
        if not raising:
            if self.state == PENDING and self.run >= self.for_evaluations:
                self.short_run_s = self.held_s  # it had the evidence, not the duration
            self.state, self.run, self.since, self.held_s = OK, 0, None, 0.0
            return False, False
        self.run += 1
        if ts is not None:
            first = ts if self.since is None else self.since
            self.since = min(first, since) if since is not None else first
            self.held_s = ts - self.since
        held = self.min_duration_s <= 0.0 or ts is None or self.held_s >= self.min_duration_s
        if self.run >= self.for_evaluations and held:
            self.state, self.run, self.since, self.held_s = FIRING, 0, None, 0.0
            return True, False
        self.state = PENDING
        return False, False

    def reset(self) -> None:
        self.state, self.run, self.since, self.held_s = OK, 0, None, 0.0

    def to_state(self) -> dict[str, Any]:
        return {"state": self.state, "run": self.run, "since": self.since, "held_s": self.held_s}

    def load(self, state: dict[str, Any]) -> None:
        self.state = str(state.get("state", OK))
        if self.state not in (OK, PENDING, FIRING):
            self.state = OK
        self.run = int(state.get("run", 0))
        since = state.get("since")
        self.since = None if since is None else float(since)
        self.held_s = float(state.get("held_s", 0.0))
