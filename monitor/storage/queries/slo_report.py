"""Every scope of an SLO, where it stands now, from the rollups (`queries.slo`): `firsttoken slo`,
the SLOs page and the budget an SLO alert's body carries."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
from sqlalchemy import Engine

from monitor.slo.scopes import members
from monitor.slo.status import EXHAUSTION_WINDOW, ScopeStatus, scope_status
from monitor.slo.windows import long_windows
from monitor.storage.queries.slo import Bound, ScopeCounts, scope_counts


@dataclass(frozen=True)
class SloReport:
    slo: object
    scopes: tuple[ScopeStatus, ...]
    days: np.ndarray  # epoch seconds of each UTC day of the period
    day_probes: np.ndarray  # (scopes, days)
    day_good: np.ndarray


def bounds_of(slo) -> list[Bound]:
    return [Bound(metric, below, above) for metric, below, above in slo.good.bounds()]


def slo_report(engine: Engine, slo, targets: Sequence, now: datetime, scope_keys: set[str] | None = None) -> SloReport:
    """`targets`: the configured ones (the SLO's `match:` picks); `scope_keys`: only these scopes."""
    scoped = members(slo, targets)
    if scope_keys is not None:
        scoped = {k: v for k, v in scoped.items() if k in scope_keys}
    keys = list(scoped)
    group_of_target = {t: i for i, k in enumerate(keys) for t in scoped[k][1]}
    windows = sorted({*long_windows(slo.period_s), slo.period_s / EXHAUSTION_WINDOW})
    counts: ScopeCounts = scope_counts(
        engine,
        group_of_target,
        len(keys),
        bounds_of(slo),
        checks=slo.good.checks,
        start=now - timedelta(seconds=slo.period_s),
        end=now,
        windows_s=windows,
    )
    statuses = []
    for i, key in enumerate(keys):
        per_window = {w: (int(counts.window_bad[w][i]), int(counts.window_probes[w][i])) for w in windows}
        statuses.append(scope_status(slo, scoped[key][0], int(counts.probes[i]), int(counts.good[i]), per_window, now))
    return SloReport(slo, tuple(statuses), counts.days, counts.day_probes, counts.day_good)
