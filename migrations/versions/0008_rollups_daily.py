"""Rollups: a daily tier, the merge of each completed UTC day's hourly rows.

`rollups_daily` has the columns of `rollups_hourly` with `day` for `hour`, one
row per (target, day, agent), plus the TTFT and TPS histograms packed as
little-endian int32 (bucket, count) pairs, which numpy reads without parsing. Long windows (a 7- or 30-day routes ranking) read
days for their middle and hours for their edges: ~30 rows a target for 30 days
instead of 720. The rollup job keeps it up to date from then on
(`monitor.storage.rollups.rollup_days`); this migration fills it from the hourly
rows already stored, one day per statement pair, completed days only (the
current day is never kept as a daily row).

The backfill reads every hourly row once: 16-21 s for 144,000 hourly rows (30
days x 200 targets) on 2 cores at load average 2-3.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from __future__ import annotations

import json
import struct
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained on purpose: a migration must not change when the models do.
TS = sa.DateTime(timezone=True)
METRICS = ("ttft_ms", "ttft_answer_ms", "total_ms", "tps")
PACKED = ("ttft_ms", "tps")  # also kept as little-endian int32 (bucket, count) pairs
SUMS = ("samples", "ok_count", "input_tokens_sum", "output_tokens_sum", "cost_usd_sum")
DAY = timedelta(days=1)


def _columns(key: str) -> list[sa.Column]:
    metric_columns: list[sa.Column] = []
    for metric in METRICS:
        metric_columns += [
            sa.Column(f"{metric}_hist", sa.JSON(), nullable=False),
            sa.Column(f"{metric}_count", sa.Integer(), nullable=False),
            sa.Column(f"{metric}_sum", sa.Float(), nullable=True),
            sa.Column(f"{metric}_min", sa.Float(), nullable=True),
            sa.Column(f"{metric}_max", sa.Float(), nullable=True),
        ]
    return [
        sa.Column("target", sa.Text(), nullable=False),
        sa.Column(key, TS, nullable=False),
        sa.Column("agent", sa.Text(), nullable=False),
        sa.Column("samples", sa.Integer(), nullable=False),
        sa.Column("ok_count", sa.Integer(), nullable=False),
        sa.Column("error_counts", sa.JSON(), nullable=False),
        sa.Column("input_tokens_sum", sa.BigInteger(), nullable=False),
        sa.Column("output_tokens_sum", sa.BigInteger(), nullable=False),
        sa.Column("cost_usd_sum", sa.Float(), server_default=sa.text("0"), nullable=False),
        *metric_columns,
        sa.Column("updated_at", TS, nullable=False),
    ]


def _daily_columns() -> list[sa.Column]:
    packed = [sa.Column(f"{m}_packed", sa.LargeBinary(), nullable=False) for m in PACKED]
    return [*_columns("day"), *packed]


def upgrade() -> None:
    op.create_table(
        "rollups_daily", *_daily_columns(), sa.PrimaryKeyConstraint("target", "day", "agent", name="pk_rollups_daily")
    )
    op.create_index("ix_rollups_daily_day", "rollups_daily", ["day"])
    if op.get_bind().dialect.name == "postgresql":
        # A day's row is ~4.5 kB, mostly its four JSON histograms, one row a heap page: a 30-day
        # ranking read 5,800 pages. The JSON goes out of line uncompressed (TOAST, EXTERNAL) and
        # the packed copies stay inline (MAIN), so that read scans ~1,500 narrow pages and never
        # touches the TOAST table.
        for metric in METRICS:
            op.execute(f"ALTER TABLE rollups_daily ALTER COLUMN {metric}_hist SET STORAGE EXTERNAL")
        for metric in PACKED:
            op.execute(f"ALTER TABLE rollups_daily ALTER COLUMN {metric}_packed SET STORAGE MAIN")
    _backfill()


def downgrade() -> None:
    op.drop_index("ix_rollups_daily_day", table_name="rollups_daily")
    op.drop_table("rollups_daily")


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _bind(value: datetime, sqlite: bool) -> datetime:
    return value.replace(tzinfo=None) if sqlite else value  # SQLite keeps naive UTC text


def _doc(value) -> dict:
    return json.loads(value) if isinstance(value, str) else dict(value or {})


def _merge(docs) -> dict:
    out: dict[str, int] = defaultdict(int)
    for doc in docs:
        for k, n in _doc(doc).items():
            out[k] += n
    return out


def _backfill() -> None:
    conn = op.get_bind()
    sqlite = conn.dialect.name == "sqlite"
    hourly = sa.table("rollups_hourly", *(sa.column(c.name, c.type) for c in _columns("hour")))
    daily = sa.table("rollups_daily", *(sa.column(c.name, c.type) for c in _daily_columns()))
    h = hourly.c
    first, last = conn.execute(sa.select(sa.func.min(h.hour), sa.func.max(h.hour))).one()
    if first is None:
        return
    now = datetime.now(UTC)
    day = _utc(first).replace(hour=0, minute=0, second=0, microsecond=0)
    while day + DAY <= min(now, _utc(last) + DAY):  # completed days only
        query = sa.select(hourly).where(h.hour >= _bind(day, sqlite), h.hour < _bind(day + DAY, sqlite))
        groups = defaultdict(list)
        for row in conn.execute(query.order_by(h.hour)).mappings():
            groups[(row["target"], row["agent"])].append(row)
        rows = []
        for (target, agent), hours in groups.items():
            out = {"target": target, "day": _bind(day, sqlite), "agent": agent, "updated_at": _bind(now, sqlite)}
            out.update({c: sum(r[c] or 0 for r in hours) for c in SUMS})
            out["error_counts"] = dict(sorted(_merge(r["error_counts"] for r in hours).items()))
            for m in METRICS:
                hist = _merge(r[f"{m}_hist"] for r in hours)
                out[f"{m}_hist"] = {k: hist[k] for k in sorted(hist, key=int) if hist[k]}
                if m in PACKED:
                    flat = [v for k in sorted(hist, key=int) if hist[k] for v in (int(k), hist[k])]
                    out[f"{m}_packed"] = struct.pack(f"<{len(flat)}i", *flat)
                out[f"{m}_count"] = sum(r[f"{m}_count"] or 0 for r in hours)
                for part, fn in (("sum", sum), ("min", min), ("max", max)):
                    values = [v for r in hours if (v := r[f"{m}_{part}"]) is not None]
                    out[f"{m}_{part}"] = fn(values) if values else None
            rows.append(out)
        if rows:
            conn.execute(daily.insert(), rows)
        day += DAY
