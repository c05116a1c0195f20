"""Official incidents: what each provider's own status page said, polled by the leader (issue 15).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained on purpose: a migration must not change when the models do.
TS = sa.DateTime(timezone=True)
BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "provider_incidents",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("provider", sa.Text(), nullable=False),
        sa.Column("source_id", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("impact", sa.Text(), nullable=True),
        sa.Column("started_at", TS, nullable=False),
        sa.Column("resolved_at", TS, nullable=True),
        sa.Column("updated_at", TS, nullable=False),
        sa.Column("shortlink", sa.Text(), nullable=True),
        sa.Column("fetched_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_provider_incidents"),
        sa.UniqueConstraint("provider", "source_id", name="uq_provider_incidents_provider_source_id"),
    )
    op.create_index("ix_provider_incidents_provider_started_at", "provider_incidents", ["provider", "started_at"])


def downgrade() -> None:
    op.drop_index("ix_provider_incidents_provider_started_at", table_name="provider_incidents")
    op.drop_table("provider_incidents")
