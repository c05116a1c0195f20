"""Maintenance windows (DESIGN §16): the ones added at run time and the providers' own.

`firsttoken maintenance add` stores a window like a silence (source `database`); the leader's
status-page poll stores each provider's scheduled maintenance (source `provider`, `source_id` the
status page's id, so a re-poll updates the same row). Windows from the config are never stored.

Revision ID: 0015_maintenance
Revises: 0014_alert_pipeline
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0015_maintenance"
down_revision: str | Sequence[str] | None = "0014_alert_pipeline"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained on purpose: a migration must not change when the models do.
TS = sa.DateTime(timezone=True)
JSON_DOC = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "maintenance_windows",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("match", JSON_DOC, nullable=False),
        sa.Column("starts_at", TS, nullable=False),
        sa.Column("ends_at", TS, nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("source", sa.String(16), server_default=sa.text("'database'"), nullable=False),
        sa.Column("source_id", sa.Text(), nullable=True),
        sa.Column("created_by", sa.Text(), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_maintenance_windows"),
        sa.UniqueConstraint("source", "source_id", name="uq_maintenance_windows_source_source_id"),
    )
    op.create_index("ix_maintenance_windows_ends_at", "maintenance_windows", ["ends_at"])


def downgrade() -> None:
    op.drop_index("ix_maintenance_windows_ends_at", table_name="maintenance_windows")
    op.drop_table("maintenance_windows")
