"""An alert chart's data (DESIGN §18): one metric of some targets over a few hours, per vantage point.

    series = per_agent(engine, ["openai/gpt-4o@us-east:short"], "ttft_ms", start, end, bucket_s=300)
    -> [AgentBuckets(agent="eu-west", t_s=…, values=…), …]   # bucket medians; NaN where none

Raw samples (a chart spans hours, under the rollups' threshold: queries.tiers), read with the
dashboard's fetcher: failed probes and the warm half of cache probes hold no latency, cancelled
probes are no measurement. `error_rate` is each bucket's failed share.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from sqlalchemy import Engine

from monitor.sample import SAMPLE_METRICS
from monitor.storage.queries.dashfetch import fetch_raw
from monitor.storage.queries.histmatrix import value_quantiles

CHART_METRICS = (*SAMPLE_METRICS, "error_rate")


@dataclass(frozen=True)
class AgentBuckets:
    agent: str
    t_s: np.ndarray  # bucket midpoints, epoch seconds
    values: np.ndarray  # the bucket's median (error_rate: failed share); NaN when it has none


def per_agent(
    engine: Engine, target_ids: Sequence[str], metric: str, start: datetime, end: datetime, *, bucket_s: float
) -> list[AgentBuckets]:
    if metric not in CHART_METRICS:
        raise ValueError(f"no chart for {metric!r}; one of {', '.join(CHART_METRICS)}")
    latency = metric in SAMPLE_METRICS
    rows = fetch_raw(engine, start, end, list(target_ids), metrics=(metric,) if latency else (), by_agent=True)
    origin = start.timestamp()
    n = max(1, int(np.ceil((end.timestamp() - origin) / bucket_s)))
    mids = origin + (np.arange(n) + 0.5) * bucket_s
    if not len(rows):
        return []
    bucket = np.clip(((rows.t_s - origin) // bucket_s).astype(np.int64), 0, n - 1)
    group = rows.agent * n + bucket
    n_groups = len(rows.agents) * n
    if latency:
        medians, _ = value_quantiles(rows.metrics[metric], group, n_groups, (0.5,))
        values = medians[:, 0]
    else:
        measured = np.bincount(group, weights=(~rows.cancelled).astype(float), minlength=n_groups)
        failed = np.bincount(group, weights=(~rows.ok & ~rows.cancelled).astype(float), minlength=n_groups)
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.where(measured > 0, failed / measured, np.nan)
    return [AgentBuckets(name, mids, values[i * n : (i + 1) * n]) for i, name in enumerate(rows.agents)]
