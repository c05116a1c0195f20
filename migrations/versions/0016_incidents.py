"""Incidents and subscriptions (DESIGN §16).

`incidents` are drafted from the confirmed pages the alert pipeline writes, one open incident per
provider; `incident_alerts` says which alerts opened or joined each (an alert joins one incident only);
`incident_updates` is each incident's timeline, published or still a draft. `status_subscribers` are
the addresses and webhooks subscribed (double opt-in), `subscriber_outbox` one message per published
update per confirmed subscriber (unique: exactly once) and the confirmation requests; `status_secrets`
holds the link-signing key when FIRSTTOKEN_STATUS_SECRET does not give one.

Revision ID: 0016_incidents
Revises: 0015_maintenance
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016_incidents"
down_revision: str | Sequence[str] | None = "0015_maintenance"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Self-contained on purpose: a migration must not change when the models do.
TS = sa.DateTime(timezone=True)
BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
STATE = sa.String(16)
FALSE = sa.text("false")
ZERO = sa.text("0")


def upgrade() -> None:
    op.create_table(
        "incidents",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("provider", sa.Text(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("status", STATE, nullable=False),
        sa.Column("state", STATE, nullable=False),
        sa.Column("components", sa.JSON(), nullable=False),
        sa.Column("started_at", TS, nullable=False),
        sa.Column("resolved_at", TS, nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.Column("published_at", TS, nullable=True),
        sa.Column("vantage_points", sa.Integer(), server_default=ZERO, nullable=False),
        sa.Column("official_id", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_incidents"),
    )
    op.create_index("ix_incidents_provider_state", "incidents", ["provider", "state"])
    op.create_index("ix_incidents_started_at", "incidents", ["started_at"])
    op.create_table(
        "incident_alerts",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("incident_id", sa.BigInteger(), nullable=False),
        sa.Column("rule", sa.Text(), nullable=False),
        sa.Column("scope_key", sa.Text(), nullable=False),
        sa.Column("fired_at", TS, nullable=False),
        sa.Column("state", STATE, nullable=False),
        sa.Column("agents", sa.Integer(), server_default=ZERO, nullable=False),
        sa.ForeignKeyConstraint(
            ["incident_id"], ["incidents.id"], name="fk_incident_alerts_incident_id_incidents", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_incident_alerts"),
        sa.UniqueConstraint("rule", "scope_key", "fired_at", name="uq_incident_alerts_rule_scope_key_fired_at"),
    )
    op.create_index("ix_incident_alerts_incident_id", "incident_alerts", ["incident_id"])
    op.create_table(
        "incident_updates",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("incident_id", sa.BigInteger(), nullable=False),
        sa.Column("at", TS, nullable=False),
        sa.Column("kind", STATE, nullable=False),
        sa.Column("state", STATE, nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("published", sa.Boolean(), server_default=FALSE, nullable=False),
        sa.Column("published_at", TS, nullable=True),
        sa.Column("created_by", sa.Text(), nullable=True),
        sa.Column("fanned_out", sa.Boolean(), server_default=FALSE, nullable=False),
        sa.ForeignKeyConstraint(
            ["incident_id"], ["incidents.id"], name="fk_incident_updates_incident_id_incidents", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_incident_updates"),
    )
    op.create_index("ix_incident_updates_incident_id_at", "incident_updates", ["incident_id", "at"])
    op.create_index("ix_incident_updates_fanned_out_published", "incident_updates", ["fanned_out", "published"])
    op.create_table(
        "status_subscribers",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("kind", STATE, nullable=False),
        sa.Column("address", sa.Text(), nullable=False),
        sa.Column("address_key", sa.Text(), nullable=False),
        sa.Column("state", STATE, nullable=False),
        sa.Column("base_url", sa.Text(), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("confirmed_at", TS, nullable=True),
        sa.Column("unsubscribed_at", TS, nullable=True),
        sa.Column("confirm_requests", sa.Integer(), server_default=ZERO, nullable=False),
        sa.Column("last_confirm_request_at", TS, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_status_subscribers"),
        sa.UniqueConstraint("kind", "address_key", name="uq_status_subscribers_kind_address_key"),
    )
    op.create_index("ix_status_subscribers_state", "status_subscribers", ["state"])
    op.create_table(
        "subscriber_outbox",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("subscriber_id", sa.BigInteger(), nullable=False),
        sa.Column("update_id", sa.BigInteger(), nullable=True),
        sa.Column("kind", STATE, nullable=False),
        sa.Column("status", STATE, nullable=False),
        sa.Column("attempts", sa.Integer(), server_default=ZERO, nullable=False),
        sa.Column("next_attempt_at", TS, nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("sent_at", TS, nullable=True),
        sa.ForeignKeyConstraint(
            ["subscriber_id"],
            ["status_subscribers.id"],
            name="fk_subscriber_outbox_subscriber_id_status_subscribers",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["update_id"],
            ["incident_updates.id"],
            name="fk_subscriber_outbox_update_id_incident_updates",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_subscriber_outbox"),
        sa.UniqueConstraint("subscriber_id", "update_id", name="uq_subscriber_outbox_subscriber_id_update_id"),
    )
    op.create_index("ix_subscriber_outbox_status_next_attempt_at", "subscriber_outbox", ["status", "next_attempt_at"])
    op.create_index("ix_subscriber_outbox_created_at", "subscriber_outbox", ["created_at"])
    op.create_table(
        "status_secrets",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_status_secrets"),
    )


def downgrade() -> None:
    op.drop_table("status_secrets")
    op.drop_index("ix_subscriber_outbox_created_at", table_name="subscriber_outbox")
    op.drop_index("ix_subscriber_outbox_status_next_attempt_at", table_name="subscriber_outbox")
    op.drop_table("subscriber_outbox")
    op.drop_index("ix_status_subscribers_state", table_name="status_subscribers")
    op.drop_table("status_subscribers")
    op.drop_index("ix_incident_updates_fanned_out_published", table_name="incident_updates")
    op.drop_index("ix_incident_updates_incident_id_at", table_name="incident_updates")
    op.drop_table("incident_updates")
    op.drop_index("ix_incident_alerts_incident_id", table_name="incident_alerts")
    op.drop_table("incident_alerts")
    op.drop_index("ix_incidents_started_at", table_name="incidents")
    op.drop_index("ix_incidents_provider_state", table_name="incidents")
    op.drop_table("incidents")
