"""Rollups: the `hour` index covers what the Health and Timeline pages sum (PostgreSQL).

Those pages sum availability and TTFT columns over every target's hours of up
to 90 days. Each rollup row also carries four histograms as JSON (most of its
width), so a plain index on `hour` still reads every heap page; with the summed
columns INCLUDEd the scan is index-only. SQLite has no INCLUDE: the plain index
stays as it is there.

The index is rebuilt inside the migration's transaction: rollup writes (the
leader's, once a minute) wait for it, a few seconds at 90 days x 1,000 targets;
sample ingest is not blocked.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained on purpose: a migration must not change when the models do.
INDEX = "ix_rollups_hourly_hour"
COVERED = ["target", "agent", "samples", "ok_count", "error_counts", "ttft_ms_sum", "ttft_ms_count", "ttft_ms_max"]


def _on_postgresql() -> bool:
    return op.get_bind().dialect.name == "postgresql"


def upgrade() -> None:
    if not _on_postgresql():
        return
    op.drop_index(INDEX, table_name="rollups_hourly")
    op.create_index(INDEX, "rollups_hourly", ["hour"], postgresql_include=COVERED)


def downgrade() -> None:
    if not _on_postgresql():
        return
    op.drop_index(INDEX, table_name="rollups_hourly")
    op.create_index(INDEX, "rollups_hourly", ["hour"])
