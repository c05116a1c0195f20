"""Alerts: the value an alert fired at and its worst value while firing.

On-call reads an alert as "fired at 1,800 ms, worst 2,400 ms, baseline 900 ms";
`value` alone is the latest one, which after resolution is the value it
resolved at. Both columns are nullable: alerts from before stay valid (and
read as unknown), and the change is a catalogue change only on PostgreSQL.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained on purpose: a migration must not change when the models do.
COLUMNS = ("fired_value", "worst_value")


def upgrade() -> None:
    with op.batch_alter_table("alerts") as batch:
        for name in COLUMNS:
            batch.add_column(sa.Column(name, sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("alerts") as batch:
        for name in reversed(COLUMNS):
            batch.drop_column(name)
