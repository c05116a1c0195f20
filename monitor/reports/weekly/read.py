"""What the weekly report reads from the database (thin: queries in, plain values out).

Everything stands on the hourly rollups (never a week of raw samples), read by the week's own hours:
a week in Europe/Berlin starts at 23:00 UTC, so the daily tier's UTC days do not cut it.

- `provider_week`: per provider, one week's `WeekFigures` and its TTFT p50 per local day;
- uptime by the status site's reader (`statushistory.daily`: the quorum, maintenance left out);
- `incidents_between`: the incidents open at any time in the week;
- `slo_budgets`: each SLO scope's budget left at the end of a week (`slo_reports` with `now` = the end).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from sqlalchemy import Engine, func, or_, select

from monitor.reports.schedule import Week
from monitor.reports.weekly.figures import WeekFigures
from monitor.storage.models import IncidentRow, RollupHourly
from monitor.storage.queries import statushistory
from monitor.storage.queries.dashfetch import cancelled_count, fetch_rollups, fetch_rows

_R = RollupHourly.__table__.c
_I = IncidentRow.__table__.c


@dataclass(frozen=True, slots=True)
class ProviderWeek:
    figures: WeekFigures
    daily_ttft_p50_ms: tuple[float | None, ...]  # one per local day, Monday first


@dataclass(frozen=True, slots=True)
class IncidentLine:
    id: int
    provider: str
    title: str
    state: str
    status: str  # draft | published
    started_at: datetime
    resolved_at: datetime | None
    components: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BudgetLine:
    slo: str
    scope: str
    provider: str | None
    objective: float
    attainment: float | None
    remaining: float | None  # budget left at the week's end
    remaining_before: float | None  # at the end of the week before
    exhausted: bool


def _maintenance(engine: Engine, config_windows, targets: Sequence, week: Week) -> dict:
    from monitor.maintenance.store import windows_between

    with engine.connect() as conn:
        windows = windows_between(conn, config_windows, week.start, week.end)
    out: dict[str, list[tuple[float, float]]] = {}
    for w in windows:
        if w.ours:  # a provider's announced window is shown on the site, but its minutes count (DESIGN §16)
            for t in targets:
                if w.covers(t):
                    out.setdefault(t.id, []).append((w.starts_at.timestamp(), w.ends_at.timestamp()))
    return out


def _sums(engine: Engine, week: Week, ids: Sequence[str]) -> list[tuple]:
    """(target, probes measured, failed, spend) over the week's hours."""
    cancelled = cancelled_count()
    query = (
        select(
            _R.target,
            func.sum(_R.samples - cancelled),
            func.sum(_R.samples - _R.ok_count - cancelled),
            func.sum(_R.cost_usd_sum),
        )
        .where(_R.hour >= week.start, _R.hour < week.end, _R.target.in_(list(ids)))
        .group_by(_R.target)
    )
    return fetch_rows(engine, query)


def provider_weeks(engine: Engine, targets: Sequence, week: Week, maintenance=()) -> dict[str, ProviderWeek]:
    """Per provider of `targets` (objects with `id` and `provider`): its week. Providers without a
    probe in the week are there with empty figures."""
    providers = sorted({t.provider for t in targets})
    index = {p: i for i, p in enumerate(providers)}
    provider_of = {t.id: t.provider for t in targets}
    ids = list(provider_of)
    n_p = len(providers)
    probes, failed, spend = np.zeros(n_p, np.int64), np.zeros(n_p, np.int64), np.zeros(n_p)
    for target, measured, bad, usd in _sums(engine, week, ids) if ids else []:
        i = index[provider_of[target]]
        probes[i] += int(measured or 0)
        failed[i] += int(bad or 0)
        spend[i] += float(usd or 0.0)
    probed_h, down_h = np.zeros(n_p), np.zeros(n_p)
    if ids:
        excluded = _maintenance(engine, maintenance, targets, week)
        daily = statushistory.daily(engine, week.start, week.end, ids, excluded=excluded)
        for row, target in enumerate(daily.targets):
            i = index[provider_of[target]]
            probed_h[i] += float(daily.probed_h[row].sum())
            down_h[i] += float(daily.down_h[row].sum())
    week_q, day_q = _quantiles(engine, week, ids, provider_of, index)
    out = {}
    for p, i in index.items():
        figures = WeekFigures(
            int(probes[i]), int(failed[i]), float(probed_h[i]), float(down_h[i]),
            _num(week_q[i, 0]), _num(week_q[i, 1]), _num(week_q[i, 2]), float(spend[i]),
        )  # fmt: skip
        out[p] = ProviderWeek(figures, tuple(_num(v) for v in day_q[i]))
    return out


def _quantiles(engine: Engine, week: Week, ids, provider_of, index) -> tuple[np.ndarray, np.ndarray]:
    """(providers × [ttft p50, ttft p90, tps p50]) over the week, and (providers × 7 days) TTFT p50."""
    n_p = len(index)
    if not ids:
        return np.full((n_p, 3), np.nan), np.full((n_p, 7), np.nan)
    rows = fetch_rollups(engine, week.start, week.end, ids, hists=("ttft_ms", "tps"))
    provider = (
        np.array([index[provider_of[t]] for t in rows.targets], dtype=np.int64)[rows.target]
        if len(rows)
        else (np.zeros(0, dtype=np.int64))
    )
    edges = np.array([d.timestamp() for d in week.day_starts()])
    day = np.clip(np.searchsorted(edges, rows.hour_s, side="right") - 1, 0, 6)
    ttft = rows.quantiles("ttft_ms", provider, n_p, (0.5, 0.9))
    tps = rows.quantiles("tps", provider, n_p, (0.5,))
    daily = rows.quantiles("ttft_ms", provider * 7 + day, n_p * 7, (0.5,)).reshape(n_p, 7)
    return np.column_stack([ttft, tps]), daily


def _num(value) -> float | None:
    return None if value is None or not np.isfinite(value) else float(value)


def incidents_between(engine: Engine, start: datetime, end: datetime, providers: Sequence[str]) -> list[IncidentLine]:
    """Incidents of `providers` open at any time in [start, end), oldest first (drafts too: the report
    is internal; each says whether it was published)."""
    query = (
        select(_I.id, _I.provider, _I.title, _I.state, _I.status, _I.started_at, _I.resolved_at, _I.components)
        .where(
            _I.started_at < end,
            or_(_I.resolved_at.is_(None), _I.resolved_at >= start),
            _I.provider.in_(list(providers)),
        )
        .order_by(_I.started_at, _I.id)
    )
    with engine.connect() as conn:
        return [
            IncidentLine(
                r.id, r.provider, r.title, r.state, r.status, r.started_at, r.resolved_at, tuple(r.components or ())
            )
            for r in conn.execute(query)
        ]


def slo_budgets(
    engine: Engine, slos: Sequence, targets: Sequence, config_windows, week: Week, providers
) -> list[BudgetLine]:
    """Each scope of each SLO over `providers` (a scope of every provider too): its budget left at the
    week's end and at the week before's end, as `firsttoken slo` would have said then."""
    if not slos:
        return []
    from monitor.maintenance.store import slo_coverage
    from monitor.storage.queries.slo_report import slo_reports

    wanted = set(providers)
    by_end: dict[datetime, dict[tuple[str, str], object]] = defaultdict(dict)
    for end in (week.end, week.before().end):
        coverage = slo_coverage(engine, config_windows, targets, slos, end)
        for report in slo_reports(engine, slos, targets, end, coverage):
            for status in report.scopes:
                by_end[end][(report.slo.name, status.scope_key)] = status
    lines = []
    for (slo, key), status in by_end[week.end].items():
        provider = status.scope.get("provider")
        if provider is not None and provider not in wanted:
            continue
        before = by_end[week.before().end].get((slo, key))
        lines.append(
            BudgetLine(
                slo,
                key,
                provider,
                status.objective,
                status.budget.attainment,
                status.budget.remaining,
                before.budget.remaining if before is not None else None,
                status.exhausted,
            )
        )
    return sorted(lines, key=lambda b: (b.slo, b.scope))


__all__ = ["BudgetLine", "IncidentLine", "ProviderWeek", "incidents_between", "provider_weeks", "slo_budgets"]
