"""What the probes cost so far: spend per provider and cost per 1,000 probes per target.

Spend over a month comes from the rollups' `cost_usd_sum` (`queries.tiers`,
rollups only: the month's whole days from the daily tier, the rest by the hour,
the current one kept up to date by the leader every few minutes), so the
Overview never scans a month of raw samples, nor 720 hourly rows a target. Cost per 1,000 probes over a short window (the
routes ranking's 30 minutes, issue 12) is read from raw samples, priced ones
only: a target without a `prices:` entry has no cost, not a cost of zero.
Over the Compare page's hours to months, it is read from the rollups likewise.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Engine, func, select

from monitor.storage.models import RollupDaily, RollupHourly, SampleRow
from monitor.storage.queries.tierread import in_spans, read_plan
from monitor.storage.rollups import hour_floor

OPEN_END = datetime(9999, 1, 1, tzinfo=UTC)  # no `until`: every row, however late its hour


@dataclass(frozen=True, slots=True)
class ProviderSpend:
    provider: str
    cost_usd: float
    probes: int


def month_start(now: datetime) -> datetime:
    return now.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def spend_by_provider(engine: Engine, since: datetime, until: datetime | None = None) -> list[ProviderSpend]:
    """Spend per provider over the rollup hours of [since, until) (no `until`: every hour written
    so far); providers with no cost left out."""
    cost: dict[str, float] = defaultdict(float)
    probes: dict[str, int] = defaultdict(int)
    for target, usd, samples in _sums(engine, since, until):
        provider = target.split("/", 1)[0]  # target ids are provider/model@region:prompt
        cost[provider] += float(usd or 0)
        probes[provider] += int(samples or 0)
    return [ProviderSpend(p, cost[p], probes[p]) for p in sorted(cost) if cost[p] > 0]


def cost_per_1k_probes(engine: Engine, since: datetime, until: datetime | None = None) -> dict[str, float]:
    """target id -> mean cost of its priced probes in [since, until) × 1,000, USD."""
    s = SampleRow
    query = (
        select(s.target, func.avg(s.cost_usd)).where(s.started_at >= since, s.cost_usd.is_not(None)).group_by(s.target)
    )
    if until is not None:
        query = query.where(s.started_at < until)
    with engine.connect() as conn:
        return {target: float(mean) * 1000 for target, mean in conn.execute(query) if mean is not None}


@dataclass(frozen=True, slots=True)
class RecordedCost:
    cost_usd: float  # what the probes cost, as each sample recorded it (cached input and reasoning included)
    probes: int

    @property
    def per_1k_probes_usd(self) -> float:
        return 1000 * self.cost_usd / self.probes if self.probes else 0.0


def recorded_cost_by_target(
    engine: Engine, target_ids: Sequence[str], since: datetime, until: datetime | None = None
) -> dict[str, RecordedCost]:
    """target id -> its recorded spend and probes over the rollup hours of [since, until);
    targets whose probes recorded no cost (no `prices:`) left out."""
    totals: dict[str, tuple[float, int]] = {}
    for t, usd, n in _sums(engine, hour_floor(since), until, target_ids):
        before = totals.get(t, (0.0, 0))
        totals[t] = (before[0] + float(usd or 0), before[1] + int(n or 0))
    return {t: RecordedCost(usd, n) for t, (usd, n) in totals.items() if usd}


def _sums(
    engine: Engine, since: datetime, until: datetime | None, target_ids: Sequence[str] | None = None
) -> list[tuple]:
    """(target, cost, probes) per target and tier over the rollup rows of [since, until): a target
    may come twice, once from its hours and once from its days."""
    plan = read_plan(engine, since, OPEN_END if until is None else until, raw=False)
    rows = []
    for r, time, spans in ((RollupHourly, RollupHourly.hour, plan.hours), (RollupDaily, RollupDaily.day, plan.days)):
        if not spans:
            continue
        query = select(r.target, func.sum(r.cost_usd_sum), func.sum(r.samples)).where(in_spans(time, spans))
        if target_ids is not None:
            query = query.where(r.target.in_(list(target_ids)))
        with engine.connect() as conn:
            rows += conn.execute(query.group_by(r.target)).all()
    return rows


def cost_per_1k_by_model(recorded: dict[str, RecordedCost], targets) -> dict[str, float]:
    """provider/model -> USD per 1,000 probes over its targets' (regions') recorded spend; priced models only."""
    spent: dict[str, tuple[float, int]] = {}
    for t in targets:
        cost = recorded.get(t.id)
        if cost is not None:
            usd, probes = spent.get(f"{t.provider}/{t.model}", (0.0, 0))
            spent[f"{t.provider}/{t.model}"] = (usd + cost.cost_usd, probes + cost.probes)
    return {model: 1000 * usd / probes for model, (usd, probes) in spent.items() if probes}
