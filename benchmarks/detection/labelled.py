"""What the newer generators (`synthetic_d` … `synthetic_g`) share: a labelled step, a labelled series and
the planning of steps. Each keeps its own noise, level and shift model and its own random streams;
only these containers and the loop that places steps are common, so a generator's outputs stay what
they were before the sharing."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    start: int  # index of the first shifted sample
    end: int  # index past the last
    factor: float
    ramp: int  # samples taken to reach `factor`


@dataclass(frozen=True)
class Series:
    interval_s: float
    times: tuple[float, ...]
    values: tuple[float | None, ...]  # None: a failed probe
    steps: tuple[Step, ...]
    level_log: tuple[float, ...] = ()  # the noise-free level without the shifts (what the oracle is told)
    sd: tuple[float, ...] = ()  # each sample's noise sd (what the oracle is told)

    def points(self):
        yield from zip(self.times, self.values, strict=True)


def plan_steps(
    rng: random.Random,
    n: int,
    interval_s: float,
    *,
    first_s: float,
    factors: tuple[float, float],
    durations_s: tuple[float, float],
    gaps_s: tuple[float, float],
    ramp: Callable[[random.Random], int],
) -> tuple[Step, ...]:
    """Steps from `first_s` on: a gap, a log-uniform duration and factor, `ramp(rng)` samples to reach it."""
    out, at = [], int(first_s / interval_s)
    while True:
        at += int(rng.uniform(*gaps_s) / interval_s)
        length = max(1, int(math.exp(rng.uniform(math.log(durations_s[0]), math.log(durations_s[1]))) / interval_s))
        if at + length >= n:
            break
        factor = math.exp(rng.uniform(math.log(factors[0]), math.log(factors[1])))
        out.append(Step(at, at + length, factor, ramp(rng)))
        at += length
    return tuple(out)
