"""The daily cycle of a series, learned from whole days, as an offset in log units.

LLM API latency follows the load of the day (±25% is common). A trailing
baseline lags such a cycle by half its window, and at 5-minute sampling a
window long enough to estimate the level (4 h) lags it by up to 15% — enough
to page on the afternoon rise. So the detector divides the cycle out first.

How: the mean log value of each UTC hour is collected for a whole day. When
the day ends its shape — each hour minus the median hour — joins the last
five days' shapes. The profile is, hour by hour, the median over those days,
smoothed to its first daily harmonics: the 24-hour and 12-hour waves always,
the 8-, 6-, 4.8- and 4-hour ones only where they stand above the noise (a
business-hours plateau needs them for its edges, a sine cycle does not):
at most 12 numbers instead of 24 noisy ones, which matters at 5-minute
sampling where an hour holds 12 samples.

Why this shape of estimate: a level shift is not part of the cycle. Samples
the detector judged to be a regression never get here (it quarantines
them), but a shift under `min_change`, or a level that moved and stayed
while the day was being collected, bends that day's shape for a few hours;
taking the median across days hour by hour outvotes such a day, where an
average (or a median of whole-day fits) would be pulled by it. Learning only
from whole days keeps the offset consistent across the day: updating each
hour as it passes would leave today's hours and yesterday's at different
levels after any change, and the seam would read as a shift. A day with
fewer than 18 hours of data is skipped; missing hours are interpolated
from their neighbours.
"""

from __future__ import annotations

import math
from typing import Any

from monitor.alerts.detectors.base import DAY_S, HOUR_S
from monitor.alerts.detectors.stats import median

BINS = 24
HARMONICS = 6  # at most; the first two always, the others when they stand above the noise (_harmonics)
ALWAYS = 2
NOISE_FROM = 7  # harmonics 7-11 of an hourly shape are mostly noise: their mean power is the yardstick
SIGNIFICANCE = 2.0  # a harmonic's power over that mean; pure noise passes at e^-4 (2%)
MIN_HOURS = 18
MEMORY_DAYS = 5


class DailyProfile:
    __slots__ = ("coef", "counts", "day", "history", "sums")

    def __init__(self) -> None:
        self.day: int | None = None  # UTC day number being collected
        self.sums = [0.0] * BINS
        self.counts = [0] * BINS
        self.history: list[list[float | None]] = []  # hourly shapes of the last days, oldest first
        self.coef: list[float] = []  # a1, b1, a2, b2 in use; empty until a day was learned

    @property
    def active(self) -> bool:
        return bool(self.coef)

    def offset(self, ts: float) -> float:
        """Log-level of the cycle at `ts` relative to the day's mean (0 until a day was learned)."""
        return cycle_offset(self.coef, ts)

    def add(self, ts: float, x: float) -> bool:
        """Collect one log value (the caller clips spikes); True when a finished day changed the profile."""
        day = int(ts // DAY_S)
        changed = False
        if self.day is None:
            self.day = day
        elif day != self.day:
            changed = self._finish_day(day)
        hour = int((ts % DAY_S) // HOUR_S)
        self.sums[hour] += x
        self.counts[hour] += 1
        return changed

    def _finish_day(self, new_day: int) -> bool:
        learn = self.day is not None and new_day == self.day + 1 and sum(n > 0 for n in self.counts) >= MIN_HOURS
        if learn:
            means = [s / n if n else None for s, n in zip(self.sums, self.counts, strict=True)]
            centre = median([m for m in means if m is not None])
            self._remember([*self.history, [None if m is None else m - centre for m in means]])
        self.day = new_day
        self.sums = [0.0] * BINS
        self.counts = [0] * BINS
        return learn

    def _remember(self, history: list[list[float | None]]) -> None:
        self.history = history[-MEMORY_DAYS:]
        if not self.history:
            self.coef = []
            return
        hourly: list[float | None] = []
        for h in range(BINS):
            seen = [day[h] for day in self.history if day[h] is not None]
            hourly.append(median(seen) if seen else None)  # type: ignore[arg-type]
        shape = _fill_gaps(hourly)
        centre = sum(shape) / BINS
        self.coef = _harmonics([v - centre for v in shape])

    def to_state(self) -> dict[str, Any]:
        return {"day": self.day, "sums": list(self.sums), "counts": list(self.counts), "history": self.history}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> DailyProfile:
        p = cls()
        p.day = None if state.get("day") is None else int(state["day"])
        sums, counts = list(state.get("sums", [])), list(state.get("counts", []))
        if len(sums) == len(counts) == BINS:
            p.sums = [float(v) for v in sums]
            p.counts = [int(v) for v in counts]
        history = [
            [None if v is None else float(v) for v in day] for day in state.get("history", []) if len(day) == BINS
        ]
        p._remember(history)
        return p


def cycle_offset(coef: list[float], ts: float) -> float:
    if not coef:
        return 0.0
    theta = 2 * math.pi * (ts % DAY_S) / DAY_S
    c1, s1 = math.cos(theta), math.sin(theta)
    # Higher harmonics from the first by the angle-sum formulas: two trig calls per offset, not 2k.
    total, ck, sk = 0.0, c1, s1
    for k in range(0, len(coef), 2):
        total += coef[k] * ck + coef[k + 1] * sk
        ck, sk = ck * c1 - sk * s1, sk * c1 + ck * s1
    return total


def _fill_gaps(values: list[float | None]) -> list[float]:
    """Missing hours linearly interpolated between the nearest hours with data, around the clock."""
    known = [h for h, v in enumerate(values) if v is not None]
    out: list[float] = []
    for h, v in enumerate(values):
        if v is not None:
            out.append(v)
            continue
        before = max((k for k in known if k < h), default=known[-1] - BINS)
        after = min((k for k in known if k > h), default=known[0] + BINS)
        a, b = values[before % BINS], values[after % BINS]
        assert a is not None and b is not None
        out.append(a + (b - a) * (h - before) / (after - before))
    return out


def _harmonics(shape: list[float]) -> list[float]:
    """Fourier coefficients of the hourly shape, each hour at its centre: two harmonics always, more if real.

    A business-hours plateau has edges an hour wide, which two harmonics (a 24- and a 12-hour wave)
    round off by a third of its height, and the error reads as a shift twice a day; a sine cycle under
    noise has nothing above the second harmonic but noise, which more harmonics would copy into the
    profile. So harmonics 3-6 are kept only where their power is SIGNIFICANCE times the mean power of
    harmonics 7-11 (as 0 otherwise).
    """
    coef = [_fourier(shape, k) for k in range(1, BINS // 2)]
    power = [a * a + b * b for a, b in coef]
    noise = sum(power[NOISE_FROM - 1 :]) / len(power[NOISE_FROM - 1 :])
    out: list[float] = []
    for k in range(1, HARMONICS + 1):
        keep = k <= ALWAYS or power[k - 1] > SIGNIFICANCE * noise
        out.extend(coef[k - 1] if keep else (0.0, 0.0))
    return out


def _fourier(shape: list[float], k: int) -> tuple[float, float]:
    angles = [2 * math.pi * k * (h + 0.5) / BINS for h in range(BINS)]
    a = 2 / BINS * sum(v * math.cos(t) for v, t in zip(shape, angles, strict=True))
    b = 2 / BINS * sum(v * math.sin(t) for v, t in zip(shape, angles, strict=True))
    return a, b
