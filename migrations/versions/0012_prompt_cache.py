"""Prompt caching (DESIGN §13). Samples: cache reads and writes as the response states them,
which half of a cache probe's cold/warm pair a sample is, and whether a warm one hit.
Rollups (hourly and daily): each half's TTFT histogram and the cache counts, so the derived
figures (warm and cold TTFT, saving, hit ratio) stay fast over 30 days.

Nullable columns only, so old rows stay valid and the migration is a catalogue change: no
table rewrite on PostgreSQL, and the partitioned `samples` parent hands them to every
partition. Old rows are not backfilled: nearly every OpenAI-shaped sample states a cached
count (often 0), so a copy would rewrite the whole table; their `cached_input_tokens` keeps the
figure under its older name.

Revision ID: 0012_prompt_cache
Revises: 0011_slos
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012_prompt_cache"
down_revision: str | Sequence[str] | None = "0011_slos"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained on purpose: a migration must not change when the models do.
SAMPLE_COLUMNS = [
    ("cache_read_tokens", sa.BigInteger()),
    ("cache_write_tokens", sa.BigInteger()),
    ("cache_state", sa.Text()),
    ("cache_hit", sa.Boolean()),
]


# Both rollup tiers: each half's TTFT (as the other metrics: histogram, count, sum, min, max) and
# the cache counts. Defaults make old rows read as "no cache probes", which they held.
ROLLUP_TABLES = ("rollups_hourly", "rollups_daily")


def _rollup_columns() -> list[sa.Column]:
    out = []
    for metric in ("cold_ttft_ms", "warm_ttft_ms"):
        out += [
            sa.Column(f"{metric}_hist", sa.JSON(), nullable=False, server_default=sa.text("'{}'")),
            sa.Column(f"{metric}_count", sa.Integer(), nullable=False, server_default=sa.text("0")),
            sa.Column(f"{metric}_sum", sa.Float(), nullable=True),
            sa.Column(f"{metric}_min", sa.Float(), nullable=True),
            sa.Column(f"{metric}_max", sa.Float(), nullable=True),
        ]
    out += [
        sa.Column("cache_hits", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("cache_judged", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("cache_read_tokens_sum", sa.BigInteger(), nullable=False, server_default=sa.text("0")),
        sa.Column("cache_write_tokens_sum", sa.BigInteger(), nullable=False, server_default=sa.text("0")),
    ]
    return out


def upgrade() -> None:
    with op.batch_alter_table("samples") as batch:
        for name, type_ in SAMPLE_COLUMNS:
            batch.add_column(sa.Column(name, type_, nullable=True))
    for table in ROLLUP_TABLES:
        with op.batch_alter_table(table) as batch:
            for column in _rollup_columns():
                batch.add_column(column)


def downgrade() -> None:
    for table in reversed(ROLLUP_TABLES):
        with op.batch_alter_table(table) as batch:
            for column in reversed(_rollup_columns()):
                batch.drop_column(column.name)
    with op.batch_alter_table("samples") as batch:
        for name, _ in reversed(SAMPLE_COLUMNS):
            batch.drop_column(name)
