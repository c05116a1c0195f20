"""Initial schema: targets, samples (partitioned by day on PostgreSQL), agents,
alerts, notification outbox, silences, hourly rollups and their bookkeeping.

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained on purpose: a migration must not change when the models do.
TS = sa.DateTime(timezone=True)
JSON_DOC = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
LIVE = "state IN ('pending', 'firing')"


def upgrade() -> None:
    op.create_table(
        "targets",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("provider", sa.Text(), nullable=False),
        sa.Column("model", sa.Text(), nullable=False),
        sa.Column("region", sa.Text(), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("protocol", sa.Text(), nullable=True),
        sa.Column("first_seen", TS, nullable=False),
        sa.Column("last_seen", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_targets"),
    )
    op.create_table(
        "samples",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("started_at", TS, nullable=False),
        sa.Column("target", sa.Text(), nullable=False),
        sa.Column("provider", sa.Text(), nullable=False),
        sa.Column("model", sa.Text(), nullable=False),
        sa.Column("region", sa.Text(), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("agent", sa.Text(), nullable=False),
        sa.Column("ok", sa.Boolean(), nullable=False),
        sa.Column("error_kind", sa.Text(), nullable=True),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.Column("ttfb_ms", sa.Float(), nullable=True),
        sa.Column("ttft_ms", sa.Float(), nullable=True),
        sa.Column("ttft_answer_ms", sa.Float(), nullable=True),
        sa.Column("total_ms", sa.Float(), nullable=True),
        sa.Column("output_tokens", sa.BigInteger(), nullable=True),
        sa.Column("tokens_source", sa.Text(), nullable=True),
        sa.Column("input_tokens", sa.BigInteger(), nullable=True),
        sa.Column("reasoning_tokens", sa.BigInteger(), nullable=True),
        sa.Column("cached_input_tokens", sa.BigInteger(), nullable=True),
        sa.Column("tps", sa.Float(), nullable=True),
        sa.Column("chunks", sa.Integer(), nullable=False),
        sa.Column("itl_p50_ms", sa.Float(), nullable=True),
        sa.Column("itl_max_ms", sa.Float(), nullable=True),
        sa.Column("dns_ms", sa.Float(), nullable=True),
        sa.Column("connect_ms", sa.Float(), nullable=True),
        sa.Column("tls_ms", sa.Float(), nullable=True),
        sa.Column("connection_reused", sa.Boolean(), nullable=True),
        sa.Column("http_status", sa.Integer(), nullable=True),
        sa.Column("request_id", sa.Text(), nullable=True),
        sa.Column("model_version", sa.Text(), nullable=True),
        sa.Column("server_timing", JSON_DOC, nullable=True),
        sa.Column("sched_lag_ms", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("id", "started_at", name="pk_samples"),
        # Ignored by SQLite; on PostgreSQL the day partitions come from monitor.storage.partitions.
        postgresql_partition_by="RANGE (started_at)",
    )
    op.create_index("ix_samples_target_started_at", "samples", ["target", "started_at"])
    op.create_index("ix_samples_started_at", "samples", ["started_at"])

    op.create_table(
        "agents",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("last_seen", TS, nullable=True),
        sa.Column("last_sample_at", TS, nullable=True),
        sa.Column("healthy", sa.Boolean(), server_default=sa.text("true"), nullable=False),
        sa.Column("version", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("name", name="pk_agents"),
    )
    op.create_table(
        "alerts",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("rule", sa.Text(), nullable=False),
        sa.Column("scope_kind", sa.Text(), nullable=False),
        sa.Column("scope_key", sa.Text(), nullable=False),
        sa.Column("provider", sa.Text(), nullable=True),
        sa.Column("model", sa.Text(), nullable=True),
        sa.Column("region", sa.Text(), nullable=True),
        sa.Column("prompt", sa.Text(), nullable=True),
        sa.Column("state", sa.Text(), nullable=False),
        sa.Column("severity", sa.Text(), nullable=False),
        sa.Column("metric", sa.Text(), nullable=False),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("baseline", sa.Float(), nullable=True),
        sa.Column("started_at", TS, nullable=False),
        sa.Column("fired_at", TS, nullable=True),
        sa.Column("resolved_at", TS, nullable=True),
        sa.Column("last_evaluated_at", TS, nullable=True),
        sa.Column("last_notified_at", TS, nullable=True),
        sa.Column("clear_count", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("pending_count", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("summary", sa.Text(), nullable=True),
        sa.Column("silenced", sa.Boolean(), server_default=sa.text("false"), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_alerts"),
    )
    op.create_index("ix_alerts_state", "alerts", ["state"])
    op.create_index(
        "uq_alerts_live_scope",
        "alerts",
        ["rule", "scope_key"],
        unique=True,
        postgresql_where=sa.text(LIVE),
        sqlite_where=sa.text(LIVE),
    )
    op.create_table(
        "notification_outbox",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("alert_id", sa.BigInteger(), nullable=False),
        sa.Column("event", sa.Text(), nullable=False),
        sa.Column("event_seq", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("notifier", sa.Text(), nullable=False),
        sa.Column("payload", JSON_DOC, nullable=False),
        sa.Column("status", sa.Text(), server_default=sa.text("'pending'"), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("next_attempt_at", TS, nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("sent_at", TS, nullable=True),
        sa.ForeignKeyConstraint(
            ["alert_id"], ["alerts.id"], name="fk_notification_outbox_alert_id_alerts", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_notification_outbox"),
        sa.UniqueConstraint(
            "alert_id",
            "event",
            "notifier",
            "event_seq",
            name="uq_notification_outbox_alert_id_event_notifier_event_seq",
        ),
    )
    op.create_index(
        "ix_notification_outbox_status_next_attempt_at", "notification_outbox", ["status", "next_attempt_at"]
    )
    op.create_table(
        "silences",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("match", JSON_DOC, nullable=False),
        sa.Column("starts_at", TS, nullable=False),
        sa.Column("ends_at", TS, nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("created_by", sa.Text(), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_silences"),
    )
    op.create_index("ix_silences_ends_at", "silences", ["ends_at"])

    metric_columns = []
    for metric in ("ttft_ms", "ttft_answer_ms", "total_ms", "tps"):
        metric_columns += [
            sa.Column(f"{metric}_hist", sa.JSON(), nullable=False),
            sa.Column(f"{metric}_count", sa.Integer(), nullable=False),
            sa.Column(f"{metric}_sum", sa.Float(), nullable=True),
            sa.Column(f"{metric}_min", sa.Float(), nullable=True),
            sa.Column(f"{metric}_max", sa.Float(), nullable=True),
        ]
    op.create_table(
        "rollups_hourly",
        sa.Column("target", sa.Text(), nullable=False),
        sa.Column("hour", TS, nullable=False),
        sa.Column("agent", sa.Text(), nullable=False),
        sa.Column("samples", sa.Integer(), nullable=False),
        sa.Column("ok_count", sa.Integer(), nullable=False),
        sa.Column("error_counts", sa.JSON(), nullable=False),
        sa.Column("input_tokens_sum", sa.BigInteger(), nullable=False),
        sa.Column("output_tokens_sum", sa.BigInteger(), nullable=False),
        *metric_columns,
        sa.Column("updated_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("target", "hour", "agent", name="pk_rollups_hourly"),
    )
    op.create_index("ix_rollups_hourly_hour", "rollups_hourly", ["hour"])
    op.create_table(
        "rollup_dirty_hours",
        sa.Column("hour", TS, nullable=False),
        sa.Column("version", sa.BigInteger(), server_default=sa.text("1"), nullable=False),
        sa.Column("marked_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("hour", name="pk_rollup_dirty_hours"),
    )
    op.create_table(
        "job_state",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("done_until", TS, nullable=True),
        sa.Column("updated_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_job_state"),
    )


def downgrade() -> None:
    op.drop_table("job_state")
    op.drop_table("rollup_dirty_hours")
    op.drop_index("ix_rollups_hourly_hour", table_name="rollups_hourly")
    op.drop_table("rollups_hourly")
    op.drop_index("ix_silences_ends_at", table_name="silences")
    op.drop_table("silences")
    op.drop_index("ix_notification_outbox_status_next_attempt_at", table_name="notification_outbox")
    op.drop_table("notification_outbox")
    op.drop_index("uq_alerts_live_scope", table_name="alerts")
    op.drop_index("ix_alerts_state", table_name="alerts")
    op.drop_table("alerts")
    op.drop_table("agents")
    op.drop_index("ix_samples_started_at", table_name="samples")
    op.drop_index("ix_samples_target_started_at", table_name="samples")
    # On PostgreSQL this drops every day partition with the parent.
    op.drop_table("samples")
    op.drop_table("targets")
