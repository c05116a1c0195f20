"""The database side of the tier plan (`queries.tiers`): how far the daily tier is built, and a
plan's spans as SQL conditions."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, and_, false, func, or_, select

from monitor.storage.models import RollupDaily
from monitor.storage.queries.tiers import Plan, Span, plan
from monitor.storage.rollups import DAY

_D = RollupDaily.__table__.c


def days_built_until(engine: Engine) -> datetime | None:
    """The end of the daily tier: its newest day + 1 day (every day before it is built; the current
    day never is, nor the last one before its final hour's grace ends); None while it is empty."""
    with engine.connect() as conn:
        newest = conn.execute(select(func.max(_D.day))).scalar()
    return None if newest is None else newest + DAY


def read_plan(engine: Engine, start: datetime, end: datetime, **rule: Any) -> Plan:
    """`tiers.plan` with the daily tier's extent, looked up only for a range the rollups serve."""
    short = plan(start, end, **rule)
    if short.raw is not None:
        return short
    return plan(start, end, days_until=days_built_until(engine), **rule)


def in_spans(column, spans: Sequence[Span]):
    """`column` inside one of the spans (in order, apart), as SQL: the outer bounds, then each gap
    left out, so an index on `column` serves the one range scan it would without the gaps."""
    if not spans:
        return false()
    bounds = [column >= spans[0].start, column < spans[-1].end]
    gaps = [or_(column < before.end, column >= after.start) for before, after in itertools.pairwise(spans)]
    return and_(*bounds, *gaps)
