"""Samples: route truth, queue wait, answer checks and cost; rollups: cost per hour.

Every new column is nullable (rollups' cost defaults to 0), so old rows stay
valid and the migration is a catalogue change only: no table rewrite on
PostgreSQL (ADD COLUMN without a volatile default), and the partitioned
`samples` parent hands the columns to every partition.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained on purpose: a migration must not change when the models do.
SAMPLE_COLUMNS = [
    ("queue_wait_ms", sa.Float()),
    ("served_by", sa.Text()),
    ("system_fingerprint", sa.Text()),
    ("fallback", sa.Boolean()),
    ("ratelimit_remaining_requests", sa.BigInteger()),
    ("ratelimit_remaining_tokens", sa.BigInteger()),
    ("cost_usd", sa.Float()),
    ("answer_fingerprint", sa.Text()),
    ("failed_check", sa.Text()),
]


def upgrade() -> None:
    with op.batch_alter_table("samples") as batch:
        for name, type_ in SAMPLE_COLUMNS:
            batch.add_column(sa.Column(name, type_, nullable=True))
    with op.batch_alter_table("rollups_hourly") as batch:
        batch.add_column(sa.Column("cost_usd_sum", sa.Float(), nullable=False, server_default=sa.text("0")))


def downgrade() -> None:
    with op.batch_alter_table("rollups_hourly") as batch:
        batch.drop_column("cost_usd_sum")
    with op.batch_alter_table("samples") as batch:
        for name, _ in reversed(SAMPLE_COLUMNS):
            batch.drop_column(name)
