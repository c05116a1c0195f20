"""One column for the tokens read from the prompt cache (DESIGN §13): `cache_read_tokens`.

`samples.cached_input_tokens` (since 0001) and `cache_read_tokens` (0012) held the same figure, the
older one alone on rows written before 0012. Upgrade copies it where only the older column is set,
then drops that column; downgrade adds it back and fills it from `cache_read_tokens`, which every
row that had it now holds, so a round trip loses nothing.

The copy touches every pre-0012 row that stated a cached count (nearly every OpenAI-shaped one) in
the migration's one transaction: on PostgreSQL a rewrite of those rows and their index entries, and
the column drop that follows is a catalogue change handed to every partition. SQLite has no DROP
COLUMN in Alembic's batch mode: the table is copied without it. Measured on the 2-core development
machine with a million such rows: upgrade 18 s and downgrade 21 s on PostgreSQL 15, 7 s and 1.4 s
on SQLite 3.40; retention bounds how many rows a database holds. Agents still on the older version
write both columns: once the column is gone their batches fail with SQLSTATE 42703, which they take
as transient (monitor.storage.ingest), so their samples spool until they are upgraded too.

Revision ID: 0013_one_cache_read_column
Revises: 0012_prompt_cache
Create Date: 2026-12-09
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013_one_cache_read_column"
down_revision: str | Sequence[str] | None = "0012_prompt_cache"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD, NEW = "cached_input_tokens", "cache_read_tokens"


def upgrade() -> None:
    op.execute(f"UPDATE samples SET {NEW} = {OLD} WHERE {NEW} IS NULL AND {OLD} IS NOT NULL")
    with op.batch_alter_table("samples") as batch:
        batch.drop_column(OLD)


def downgrade() -> None:
    with op.batch_alter_table("samples") as batch:
        batch.add_column(sa.Column(OLD, sa.BigInteger(), nullable=True))
    op.execute(f"UPDATE samples SET {OLD} = {NEW} WHERE {NEW} IS NOT NULL")
