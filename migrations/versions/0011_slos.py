"""Alerts: what an SLO burn-rate alert (DESIGN §12) carries besides its burn rate.

An SLO alert's `value` is the burn rate over its window pair's long window and its `baseline` the
pair's factor; these columns add the SLO it belongs to, the window pair (`1h/5m`) that holds, and
the share of the period's error budget left, which the notification body carries. All nullable:
every other alert leaves them empty, and on PostgreSQL the change is a catalogue change only.

Revision ID: 0011_slos
Revises: 0010_leader_lease
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_slos"
down_revision: str | Sequence[str] | None = "0010_leader_lease"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained on purpose: a migration must not change when the models do.
COLUMNS = (("slo", sa.Text()), ("burn_window", sa.Text()), ("budget_remaining", sa.Float()))


def upgrade() -> None:
    with op.batch_alter_table("alerts") as batch:
        for name, kind in COLUMNS:
            batch.add_column(sa.Column(name, kind, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("alerts") as batch:
        for name, _kind in reversed(COLUMNS):
            batch.drop_column(name)
