"""Samples: prompt caching (DESIGN §13): cache reads and writes as the response states them,
and which half of a cache probe's cold/warm pair a sample is.

Nullable columns only, so old rows stay valid and the migration is a catalogue change: no
table rewrite on PostgreSQL, and the partitioned `samples` parent hands them to every
partition. Old rows are not backfilled: nearly every OpenAI-shaped sample states a cached
count (often 0), so a copy would rewrite the whole table; their `cached_input_tokens` keeps the
figure under its older name.

Revision ID: 0012_prompt_cache
Revises: 0008
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012_prompt_cache"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained on purpose: a migration must not change when the models do.
SAMPLE_COLUMNS = [
    ("cache_read_tokens", sa.BigInteger()),
    ("cache_write_tokens", sa.BigInteger()),
    ("cache_state", sa.Text()),
    ("cache_hit", sa.Boolean()),
]


def upgrade() -> None:
    with op.batch_alter_table("samples") as batch:
        for name, type_ in SAMPLE_COLUMNS:
            batch.add_column(sa.Column(name, type_, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("samples") as batch:
        for name, _ in reversed(SAMPLE_COLUMNS):
            batch.drop_column(name)
