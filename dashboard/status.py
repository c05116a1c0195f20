"""How measurements become states and colours (pure: values in, values out).

One place for every threshold the dashboard paints with, so the Overview grid,
the Timeline and the Health page agree on what "degraded" means:

- a period with no measured probe has no data;
- availability under 50% is down (a major outage when it is most of a provider);
- availability under 95%, or a typical TTFT at least 1.5x the series' own
  baseline, is degraded;
- anything else is healthy.

A single failure never degrades a period: with 12 probes an hour one failure is
already 92% availability, and one failed probe is noise, not an incident.

The daily bars of the Health page use stricter availability steps (a day is
1,440 probes at 1/min, so 99% is already 14 failures).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

HEALTHY, DEGRADED, DOWN, NO_DATA = "healthy", "degraded", "down", "no data"
STATES = (HEALTHY, DEGRADED, DOWN, NO_DATA)
DOWN_BELOW = 0.50
DEGRADED_BELOW = 0.95
LATENCY_DEGRADED_RATIO = 1.5
MIN_FAILURES = 2

# Colour-blind-safe-ish traffic colours, readable on the light theme.
STATE_COLORS = {HEALTHY: "#2e9d5b", DEGRADED: "#f0a202", DOWN: "#d64545", NO_DATA: "#c9ccd1"}

OPERATIONAL, DEGRADED_PERF, PARTIAL, MAJOR = (
    "operational",
    "degraded performance",
    "partial outage",
    "major outage",
)
PROVIDER_STATUS_COLORS = {OPERATIONAL: "#2e9d5b", DEGRADED_PERF: "#f0a202", PARTIAL: "#e8702a", MAJOR: "#d64545"}

# Daily bars: (minimum availability, label, colour), best first.
DAY_STEPS = (
    (0.999, "≥ 99.9%", "#2e9d5b"),
    (0.99, "≥ 99%", "#8cc751"),
    (0.95, "≥ 95%", "#f0a202"),
    (0.50, "≥ 50%", "#e8702a"),
    (0.0, "< 50%", "#d64545"),
)
SLOW_DAY_COLOR = "#b58900"


def _bad(x: float | None) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def state_of(measured: int, failed: int, latency_ratio: float | None) -> str:
    if measured <= 0:
        return NO_DATA
    availability = 1 - failed / measured
    if failed >= MIN_FAILURES and availability < DOWN_BELOW:
        return DOWN
    if failed >= MIN_FAILURES and availability < DEGRADED_BELOW:
        return DEGRADED
    if not _bad(latency_ratio) and latency_ratio >= LATENCY_DEGRADED_RATIO:
        return DEGRADED
    return HEALTHY


def worst(states: Iterable[str]) -> str:
    """The most severe state; no data only when nothing was measured at all."""
    seen = set(states)
    for state in (DOWN, DEGRADED, HEALTHY):
        if state in seen:
            return state
    return NO_DATA


def provider_status(states: Iterable[str], live_alert_metrics: Iterable[str] = ()) -> str:
    """Statuspage wording from the provider's target states and firing alerts."""
    states = [s for s in states if s != NO_DATA]
    metrics = set(live_alert_metrics)
    down = sum(s == DOWN for s in states)
    if states and down >= max(1, len(states) / 2):
        return MAJOR
    if down or "error_rate" in metrics:
        return PARTIAL
    if any(s == DEGRADED for s in states) or metrics:
        return DEGRADED_PERF
    return OPERATIONAL


def day_color(availability: float | None, latency_ratio: float | None) -> tuple[str, str]:
    """(colour, label) of one daily bar."""
    if _bad(availability):
        return STATE_COLORS[NO_DATA], "no data"
    for floor, label, color in DAY_STEPS:
        if availability >= floor:
            if floor >= 0.99 and not _bad(latency_ratio) and latency_ratio >= LATENCY_DEGRADED_RATIO:
                return SLOW_DAY_COLOR, f"{label} available, TTFT {latency_ratio:.1f}x baseline"
            return color, f"{label} available"
    return DAY_STEPS[-1][2], DAY_STEPS[-1][1]


@dataclass(frozen=True)
class Period:
    """A run of consecutive non-healthy periods of one lane."""

    lane: str
    state: str
    start: datetime
    end: datetime
    detail: str = ""


def runs(lane: str, starts: list[datetime], ends: list[datetime], states: list[str]) -> list[Period]:
    """Merge consecutive equal degraded/down periods into runs (healthy and no data are gaps)."""
    out: list[Period] = []
    for start, end, state in zip(starts, ends, states, strict=True):
        if state not in (DEGRADED, DOWN):
            continue
        if out and out[-1].state == state and out[-1].end == start and out[-1].lane == lane:
            out[-1] = Period(lane, state, out[-1].start, end)
        else:
            out.append(Period(lane, state, start, end))
    return out


# Severity codes for vectorised work: higher is worse.
_CODE = {NO_DATA: 0, HEALTHY: 1, DEGRADED: 2, DOWN: 3}
_NAME = {v: k for k, v in _CODE.items()}


def state_codes(measured, failed, latency_ratio):
    """`state_of` over whole (targets, periods) arrays; returns severity codes (see `_CODE`)."""
    import numpy as np

    measured = np.asarray(measured)
    with np.errstate(invalid="ignore", divide="ignore"):
        availability = np.where(measured > 0, 1 - np.asarray(failed) / np.maximum(measured, 1), np.nan)
        slow = np.nan_to_num(np.asarray(latency_ratio, dtype=float), nan=0.0) >= LATENCY_DEGRADED_RATIO
    codes = np.full(measured.shape, _CODE[HEALTHY])
    enough = np.asarray(failed) >= MIN_FAILURES
    codes[((availability < DEGRADED_BELOW) & enough) | slow] = _CODE[DEGRADED]
    codes[(availability < DOWN_BELOW) & enough] = _CODE[DOWN]
    codes[measured <= 0] = _CODE[NO_DATA]
    return codes


def lane_periods(
    targets: list[str], lane_of: dict[str, str], starts: list[datetime], step, codes
) -> dict[str, list[Period]]:
    """Worst state per lane (e.g. provider/region/model over its prompts) per period, as runs."""
    import numpy as np

    lanes: dict[str, list[int]] = {}
    for i, target in enumerate(targets):
        if target in lane_of:
            lanes.setdefault(lane_of[target], []).append(i)
    ends = [s + step for s in starts]
    out = {}
    for lane, rows in sorted(lanes.items()):
        worst_codes = np.asarray(codes)[rows].max(axis=0)
        out[lane] = runs(lane, list(starts), ends, [_NAME[int(c)] for c in worst_codes])
    return out
