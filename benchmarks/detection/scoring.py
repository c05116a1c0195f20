"""What every detection suite shares: a case, its run through `SeriesDetector`, and its score.

- event: a labelled shift (threshold: a stretch where the true p90 is over
  the bound; error rules: a burst). An alarm (the point where an alert
  starts firing) is a true positive if it starts inside an event or within
  a grace after its end (3 samples; plus the window for windowed rules,
  whose statistic lags); only the first alarm per event counts, a second
  one is a false positive (a duplicate page). Every other alarm is a
  false positive.
- recall counts eligible events only (each suite says which are eligible;
  an alarm on an ineligible one is not false, a miss is not counted).
- F1 from that precision and recall.
- delay, in samples: alarm index minus the index of the event's first
  sample (0 = the first shifted sample raised it, 3 = the fourth).
- 2x delay: a separate set of exactly-sized steps (`two_x`); "2x within 3"
  is the share alarmed with a delay of 3 or less.
- false alarms per target-month: alarms on series with no shift and no
  burst (`free`), per 30 days of one target. Every such series starts with
  an empty detector, so each month includes the first-day warm-up.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from monitor.alerts.detectors.base import DAY_S
from monitor.alerts.detectors.detect import DetectorSettings, SeriesDetector

MONTH_S = 30 * DAY_S
GRACE = 3


class LabelledSeries(Protocol):
    """What scoring reads of any generator's series."""

    interval_s: float

    @property
    def values(self) -> Sequence[float | None]: ...

    def points(self) -> Iterator[tuple[float, float | None]]: ...


@dataclass(frozen=True)
class Event:
    start: int
    end: int
    eligible: bool


@dataclass(frozen=True)
class Case:
    """One series, one rule, and what counts as an event on it."""

    set: str  # shifted | two_x | free
    series: LabelledSeries
    settings: DetectorSettings
    events: tuple[Event, ...]
    grace: int


@dataclass(frozen=True)
class Result:
    """What a worker sends back: the case without its samples, and the alarms."""

    set: str
    events: tuple[Event, ...]
    grace: int
    samples: int
    interval_s: float
    alarms: tuple[int, ...]


def alarms(case: Case) -> list[int]:
    det = SeriesDetector(case.settings)
    return [i for i, (ts, v) in enumerate(case.series.points()) if det.observe(ts, v).alarm_started]


def run_case(build: Callable[[], Case], tuning: tuple[tuple[str, float], ...] = ()) -> Result:
    case = build()
    if tuning:  # detector settings under study (sensitivity runs), on top of each kind's rule
        case = replace(case, settings=replace(case.settings, **dict(tuning)))
    n = len(case.series.values)
    return Result(case.set, case.events, case.grace, n, case.series.interval_s, tuple(alarms(case)))


@dataclass(frozen=True)
class Score:
    precision: float
    recall: float
    f1: float
    eligible: int
    delays: tuple[int, ...]
    two_x_delays: tuple[int, ...]
    two_x_missed: int
    false_per_month: float
    false_alarms: int
    months: float

    def delay(self, q: float, two_x: bool = False) -> int | None:
        values = sorted(self.two_x_delays if two_x else self.delays)
        return values[min(len(values) - 1, math.ceil(q * len(values)) - 1)] if values else None

    @property
    def two_x_caught(self) -> str:
        """`caught/all` of the exactly-sized steps (the 2x set, or the exactly-min_change one)."""
        return f"{len(self.two_x_delays)}/{len(self.two_x_delays) + self.two_x_missed}"

    @property
    def two_x_within_3(self) -> float | None:
        total = len(self.two_x_delays) + self.two_x_missed
        return sum(d <= 3 for d in self.two_x_delays) / total if total else None


def score(results: Sequence[Result]) -> Score:
    tp = fp = eligible = detected = free_alarms = missed_2x = 0
    delays: list[int] = []
    delays_2x: list[int] = []
    free_months = 0.0
    for r in results:
        if r.set == "free":
            free_alarms += len(r.alarms)
            free_months += r.samples * r.interval_s / MONTH_S
            continue
        first: dict[int, int] = {}
        for a in r.alarms:
            k = next((k for k, e in enumerate(r.events) if e.start <= a < e.end + r.grace), None)
            if k is None or k in first:
                fp += r.set == "shifted"
            else:
                first[k] = a
                tp += r.set == "shifted"
        for k, e in enumerate(r.events):
            if r.set == "two_x":
                if k in first:
                    delays_2x.append(first[k] - e.start)
                else:
                    missed_2x += 1
            elif e.eligible:
                eligible += 1
                if k in first:
                    detected += 1
                    delays.append(first[k] - e.start)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = detected / eligible if eligible else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    per_month = free_alarms / free_months if free_months else 0.0
    return Score(
        precision, recall, f1, eligible, tuple(delays), tuple(delays_2x), missed_2x, per_month, free_alarms, free_months
    )


def fmt(value: float | None) -> str:
    """A table cell: the value, or a dash when there is none."""
    return "—" if value is None else f"{value:g}"
