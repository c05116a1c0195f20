"""Leader election by a lease row with a fencing token; samples say which egress proxy they went through (issue 22).

The advisory lock it replaces is session state: through a transaction pooler
(PgBouncer `pool_mode = transaction`) the session that holds it is not the
client's, so two agents could both believe they lead. `leader_lease` holds
one row per elected role: who holds it, until when (the database's clock),
and a token that grows by one at every change of holder. Every leader-only
transaction checks the token first (monitor/agent/leader.py).

`samples.via_proxy`: the egress proxy's origin when a probe went through one
(its connect time is then the proxy's). A nullable column without a default:
no table rewrite, instant on a partitioned table of any size.

Revision ID: 0010_leader_lease
Revises: 0009_vantage_points
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_leader_lease"
down_revision: str | Sequence[str] | None = "0009_vantage_points"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained on purpose: a migration must not change when the models do.
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "leader_lease",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("holder", sa.Text(), nullable=False),
        sa.Column("token", sa.BigInteger(), nullable=False),
        sa.Column("acquired_at", TS, nullable=False),
        sa.Column("expires_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_leader_lease"),
    )
    op.add_column("samples", sa.Column("via_proxy", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("samples", "via_proxy")
    op.drop_table("leader_lease")
