"""Routes: canonical model names on targets; text values for `kind: change` alerts.

`targets.canonical_model` is the config's `as:` name (null: the model id itself,
as for every target recorded before this revision); comparisons and routes group
by it. A change alert's value and baseline are labels (an upstream, a
fingerprint), so alerts gain `value_text` / `baseline_text` beside the numeric
columns. All nullable: a catalogue change, no table rewrite.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("targets") as batch:
        batch.add_column(sa.Column("canonical_model", sa.Text(), nullable=True))
    with op.batch_alter_table("alerts") as batch:
        batch.add_column(sa.Column("value_text", sa.Text(), nullable=True))
        batch.add_column(sa.Column("baseline_text", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("alerts") as batch:
        batch.drop_column("baseline_text")
        batch.drop_column("value_text")
    with op.batch_alter_table("targets") as batch:
        batch.drop_column("canonical_model")
