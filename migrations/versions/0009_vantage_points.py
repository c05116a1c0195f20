"""Alerts: vantage points (DESIGN §11).

`agent` is set on an alert below the quorum (what one vantage point sees);
`agents` and `agents_clear` list the vantage points where the condition
holds and those that probed the target and see it normal; `attribution` is
the "is it them or us" split of a latency change. `samples.confirmation` marks a
probe the leader asked for (`confirmation_requests`, DESIGN §11). All nullable: alerts from
before read as "no agent information". Detector checkpoints need no change:
their `series` now spells (target, agent); old pooled ones are left unread
and the per-agent detectors warm up from history (see monitor/alerts/engine.py).

Revision ID: 0009_vantage_points
Revises: 0008
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_vantage_points"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained on purpose: a migration must not change when the models do.
TEXT_COLUMNS = ("agent",)
JSON_COLUMNS = ("agents", "agents_clear", "attribution")


def upgrade() -> None:
    with op.batch_alter_table("alerts") as batch:
        for name in TEXT_COLUMNS:
            batch.add_column(sa.Column(name, sa.Text(), nullable=True))
        for name in JSON_COLUMNS:
            batch.add_column(sa.Column(name, sa.JSON(), nullable=True))
    # Confirmation probes: the samples say which probes were asked for, the leader's asks wait here.
    # On PostgreSQL the `samples` parent hands the column to every partition (a catalogue change).
    with op.batch_alter_table("samples") as batch:
        batch.add_column(sa.Column("confirmation", sa.Boolean(), nullable=True))
    op.create_table(
        "confirmation_requests",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True, autoincrement=True),
        sa.Column("target", sa.Text(), nullable=False),
        sa.Column("seen_from", sa.Text(), nullable=False),
        sa.Column("requested_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_confirmation_requests_requested_at", "confirmation_requests", ["requested_at"])


def downgrade() -> None:
    op.drop_index("ix_confirmation_requests_requested_at", table_name="confirmation_requests")
    op.drop_table("confirmation_requests")
    with op.batch_alter_table("samples") as batch:
        batch.drop_column("confirmation")
    with op.batch_alter_table("alerts") as batch:
        for name in reversed((*TEXT_COLUMNS, *JSON_COLUMNS)):
            batch.drop_column(name)
