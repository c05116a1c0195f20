"""An alert chart's data (DESIGN §18): one metric of some targets over a few hours, per vantage point.

    series = per_agent(engine, ["openai/gpt-4o@us-east:short"], "ttft_ms", start, end, bucket_s=300)
    -> [AgentBuckets(agent="eu-west", t_s=…, values=…), …]   # bucket medians; NaN where none

Raw samples (a chart spans hours, under the rollups' threshold: queries.tiers), as the dashboard
reads them: a failed probe and the warm half of a cache probe hold no latency, a cancelled probe is
no measurement. Only the three columns the chart needs leave the database (time, agent, the value,
or for `error_rate` whether the probe failed); a provider-region's twenty targets over six hours
are some 20,000 rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from sqlalchemy import Engine, or_, select

from monitor.sample import SAMPLE_METRICS
from monitor.storage.models import SampleRow
from monitor.storage.queries.dashfetch import CANCELLED, epoch_s, fetch_rows
from monitor.storage.queries.histmatrix import value_quantiles

CHART_METRICS = (*SAMPLE_METRICS, "error_rate")
_S = SampleRow.__table__.c


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
    where = [_S.started_at >= start, _S.started_at < end, _S.target.in_(list(target_ids))]
    if latency:
        column = _S[metric]
        where += [_S.ok.is_(True), column.is_not(None), or_(_S.cache_state.is_(None), _S.cache_state != "warm")]
    else:
        column = _S.ok
        where.append(or_(_S.error_kind.is_(None), _S.error_kind != CANCELLED))
    rows = fetch_rows(engine, select(epoch_s(_S.started_at, engine), _S.agent, column).where(*where))
    if not rows:
        return []
    t_s, agent_of, value = zip(*rows, strict=True)
    agents = sorted(set(agent_of))
    index = {name: i for i, name in enumerate(agents)}
    origin = start.timestamp()
    n = max(1, int(np.ceil((end.timestamp() - origin) / bucket_s)))
    bucket = np.clip(((np.array(t_s, dtype=float) - origin) // bucket_s).astype(np.int64), 0, n - 1)
    group = np.fromiter((index[a] for a in agent_of), dtype=np.int64, count=len(agent_of)) * n + bucket
    n_groups = len(agents) * n
    if latency:
        medians, _ = value_quantiles(np.array(value, dtype=float), group, n_groups, (0.5,))
        values = medians[:, 0]
    else:
        measured = np.bincount(group, minlength=n_groups).astype(float)
        failed = np.bincount(group, weights=~np.array(value, dtype=bool), minlength=n_groups)
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.where(measured > 0, failed / measured, np.nan)
    mids = origin + (np.arange(n) + 0.5) * bucket_s
    return [AgentBuckets(name, mids, values[i * n : (i + 1) * n]) for i, name in enumerate(agents)]
