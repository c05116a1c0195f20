"""Scheduled reports sent (DESIGN §17): `report_runs` holds one row per `reports:` entry and period,
unique on (report, period), so a report is claimed by one leader, sent, then marked sent; a claim
left by a dead leader is taken again once its lease ends (monitor.reports.runs).

Revision ID: 0017_report_runs
Revises: 0016_incidents
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017_report_runs"
down_revision: str | Sequence[str] | None = "0016_incidents"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained on purpose: a migration must not change when the models do.
TS = sa.DateTime(timezone=True)
BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
ZERO = sa.text("0")


def upgrade() -> None:
    op.create_table(
        "report_runs",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("report", sa.Text(), nullable=False),
        sa.Column("period", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default=ZERO, nullable=False),
        sa.Column("holder", sa.Text(), nullable=True),
        sa.Column("lease_until", TS, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("sent_at", TS, nullable=True),
        sa.Column("recipients", sa.Integer(), server_default=ZERO, nullable=False),
        sa.Column("message_id", sa.Text(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_report_runs"),
        sa.UniqueConstraint("report", "period", name="uq_report_runs_report_period"),
    )
    op.create_index("ix_report_runs_status_lease_until", "report_runs", ["status", "lease_until"])


def downgrade() -> None:
    op.drop_index("ix_report_runs_status_lease_until", table_name="report_runs")
    op.drop_table("report_runs")
