"""Two or three vantage points probing the same targets, as samples (DESIGN §11 "Must show").

Every sample carries the timings attribution reads: `ttfb_ms` (the path: a
streaming API sends headers at once) and `ttft_ms` (the path plus the
provider's wait for the first token). A path fault adds to both; a provider
fault only to the part after the headers.
"""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import datetime, timedelta

from monitor.sample import Sample

from .helpers import T0, sample

STEP_S = 60.0  # one probe a minute per (target, agent)
PATH_MS = {"a": 120.0, "b": 150.0, "c": 140.0, "far": 600.0}  # each vantage point's own path
PROVIDER_MS = 500.0


def probes(
    target: str,
    agent: str,
    hours: float,
    *,
    path_extra=lambda _t: 0.0,
    provider_factor=lambda _t: 1.0,
    start: datetime = T0,
    seed: int = 0,
) -> list[Sample]:
    """One target seen from one agent: lognormal noise (sigma 0.15) on both parts.

    `path_extra(t_s)` adds milliseconds to the path at t seconds from `start`; `provider_factor(t_s)`
    multiplies the provider's part."""
    rng = random.Random(f"{target}/{agent}/{seed}")
    out = []
    offset_s = {"a": 0.0, "b": 20.0, "c": 40.0, "far": 30.0}.get(agent, 10.0)  # agents interleave
    n = int(hours * 3600 / STEP_S)
    for i in range(n):
        t_s = i * STEP_S + offset_s
        path = (PATH_MS.get(agent, 130.0) + path_extra(t_s)) * rng.lognormvariate(0, 0.15)
        provider = PROVIDER_MS * provider_factor(t_s) * rng.lognormvariate(0, 0.15)
        s = sample(target, start + timedelta(seconds=t_s), path + provider, agent=agent)
        out.append(replace(s, ttfb_ms=path))
    return out


def between(lo_h: float, hi_h: float, value: float, otherwise: float):
    return lambda t_s: value if lo_h * 3600 <= t_s < hi_h * 3600 else otherwise


REGRESSION_RULE = {
    "name": "ttft-regression",
    "metric": "ttft_ms",
    "kind": "regression",
    "min_change": "50%",
    "severity": "page",
}
