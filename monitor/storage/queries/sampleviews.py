"""Raw samples of one target for the dashboard's Samples page, with outcome filters.

Bounded by target and time, so PostgreSQL reads the (target, started_at)
index of the few day partitions involved.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy import Engine, func, select

from monitor.sample import Sample, write_csv
from monitor.storage.models import SampleRow
from monitor.storage.rows import row_to_sample

_S = SampleRow.__table__.c
OUTCOMES = ("all", "ok", "failed", "cancelled")


def target_samples(
    engine: Engine,
    target: str,
    start: datetime,
    end: datetime,
    *,
    outcome: str = "all",
    error_kinds: Sequence[str] = (),
    limit: int = 5_000,
) -> list[Sample]:
    """The newest `limit` matching samples, returned oldest first."""
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}")
    query = select(SampleRow.__table__).where(_S.target == target, _S.started_at >= start, _S.started_at < end)
    if outcome == "ok":
        query = query.where(_S.ok.is_(True))
    elif outcome == "failed":
        query = query.where(_S.ok.is_(False), func.coalesce(_S.error_kind, "") != "cancelled")
    elif outcome == "cancelled":
        query = query.where(_S.error_kind == "cancelled")
    if error_kinds:
        query = query.where(_S.error_kind.in_(list(error_kinds)))
    query = query.order_by(_S.started_at.desc(), _S.id.desc()).limit(limit)
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    return [row_to_sample(r._mapping) for r in reversed(rows)]


def error_kinds_of(engine: Engine, target: str, start: datetime, end: datetime) -> list[str]:
    query = (
        select(_S.error_kind)
        .where(_S.target == target, _S.started_at >= start, _S.started_at < end, _S.error_kind.is_not(None))
        .distinct()
    )
    with engine.connect() as conn:
        return sorted(conn.execute(query).scalars().all())


def _timestamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def backtest_csv(samples: Sequence[Sample], metric: str = "ttft_ms") -> str:
    """`timestamp,value` as `firsttoken backtest --csv` reads it: an empty value is a failed probe.

    Cancelled samples are left out: they are not measurements, and replaying them
    as failures would make the detector see errors the provider never made.
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("timestamp", "value"))
    for s in samples:
        if s.error_kind == "cancelled":
            continue
        value = getattr(s, metric) if s.ok else None
        writer.writerow((_timestamp(s.started_at), "" if value is None else repr(float(value))))
    return out.getvalue()


def full_csv(samples: Sequence[Sample]) -> str:
    """Every field, the columns and spelling of `firsttoken samples --csv`."""
    out = io.StringIO()
    write_csv(samples, out)
    return out.getvalue()
