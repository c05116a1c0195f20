"""One alert pipeline (DESIGN §15): an alert keeps what inhibits it and what mutes it.

`inhibited_by` is the id of the firing alert that makes this one redundant (an error-rate page over
a latency alert of the same provider and region, a provider-region alert over its targets');
`muted` says what mutes its notifications: `silence` or `maintenance`. Both are null on every
existing row, which is what they were: nothing recorded them before.

Revision ID: 0014_alert_pipeline
Revises: 0013_one_cache_read_column
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014_alert_pipeline"
down_revision: str | Sequence[str] | None = "0013_one_cache_read_column"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("alerts") as batch:
        batch.add_column(sa.Column("inhibited_by", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("muted", sa.String(16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("alerts") as batch:
        batch.drop_column("muted")
        batch.drop_column("inhibited_by")
