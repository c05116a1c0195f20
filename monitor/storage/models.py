"""SQLAlchemy 2 models: the schema of record (the migrations must agree, `alembic check`).

These classes never leave `monitor/storage/`: callers get `Sample` and other
frozen values from `queries`.

On PostgreSQL `samples` is partitioned by day on `started_at` (see
`partitions.py`), so its unique key must include `started_at`: the primary
key is (id, started_at). A sample's `started_at` never changes, so this is as
strong as a unique `id` for idempotent re-inserts. SQLite gets a plain table
with the same key.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from monitor.sample import SAMPLE_METRICS

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """timestamptz on PostgreSQL; on SQLite a naive UTC text that sorts correctly.

    Every datetime going in is converted to UTC and every one coming out is
    aware UTC, so callers never see a naive or local time.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the database; use aware UTC datetimes")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


# Queryable provider timings: JSONB on PostgreSQL.
JSONDoc = JSON().with_variant(JSONB(), "postgresql")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map: ClassVar[dict[Any, Any]] = {datetime: UTCDateTime(), dict[str, Any]: JSONDoc}


class Target(Base):
    __tablename__ = "targets"

    id: Mapped[str] = mapped_column(Text, primary_key=True)
    provider: Mapped[str] = mapped_column(Text)
    model: Mapped[str] = mapped_column(Text)
    region: Mapped[str] = mapped_column(Text)
    prompt: Mapped[str] = mapped_column(Text)
    protocol: Mapped[str | None] = mapped_column(Text)
    canonical_model: Mapped[str | None] = mapped_column(Text)  # config `as:` name; null: the model id
    first_seen: Mapped[datetime]
    last_seen: Mapped[datetime]


class SampleRow(Base):
    __tablename__ = "samples"
    __table_args__ = (
        Index(None, "target", "started_at"),
        Index(None, "started_at"),
        {"postgresql_partition_by": "RANGE (started_at)"},
    )

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    started_at: Mapped[datetime] = mapped_column(primary_key=True)
    target: Mapped[str] = mapped_column(Text)
    provider: Mapped[str] = mapped_column(Text)
    model: Mapped[str] = mapped_column(Text)
    region: Mapped[str] = mapped_column(Text)
    prompt: Mapped[str] = mapped_column(Text)
    agent: Mapped[str] = mapped_column(Text)
    ok: Mapped[bool] = mapped_column(Boolean)
    error_kind: Mapped[str | None] = mapped_column(Text)
    error_message: Mapped[str | None] = mapped_column(Text)
    ttfb_ms: Mapped[float | None] = mapped_column(Float)
    ttft_ms: Mapped[float | None] = mapped_column(Float)
    ttft_answer_ms: Mapped[float | None] = mapped_column(Float)
    total_ms: Mapped[float | None] = mapped_column(Float)
    output_tokens: Mapped[int | None] = mapped_column(BigInteger)
    tokens_source: Mapped[str | None] = mapped_column(Text)
    input_tokens: Mapped[int | None] = mapped_column(BigInteger)
    reasoning_tokens: Mapped[int | None] = mapped_column(BigInteger)
    # Migration 0012; 0013 folded the older `cached_input_tokens` (always the same figure) into it.
    cache_read_tokens: Mapped[int | None] = mapped_column(BigInteger)
    cache_write_tokens: Mapped[int | None] = mapped_column(BigInteger)
    cache_state: Mapped[str | None] = mapped_column(Text)
    cache_hit: Mapped[bool | None] = mapped_column(Boolean)
    tps: Mapped[float | None] = mapped_column(Float)
    chunks: Mapped[int] = mapped_column(Integer)
    itl_p50_ms: Mapped[float | None] = mapped_column(Float)
    itl_max_ms: Mapped[float | None] = mapped_column(Float)
    dns_ms: Mapped[float | None] = mapped_column(Float)
    connect_ms: Mapped[float | None] = mapped_column(Float)
    tls_ms: Mapped[float | None] = mapped_column(Float)
    connection_reused: Mapped[bool | None] = mapped_column(Boolean)
    http_status: Mapped[int | None] = mapped_column(Integer)
    request_id: Mapped[str | None] = mapped_column(Text)
    model_version: Mapped[str | None] = mapped_column(Text)
    server_timing: Mapped[dict[str, Any] | None]
    sched_lag_ms: Mapped[float | None] = mapped_column(Float)
    queue_wait_ms: Mapped[float | None] = mapped_column(Float)
    served_by: Mapped[str | None] = mapped_column(Text)
    system_fingerprint: Mapped[str | None] = mapped_column(Text)
    fallback: Mapped[bool | None] = mapped_column(Boolean)
    ratelimit_remaining_requests: Mapped[int | None] = mapped_column(BigInteger)
    ratelimit_remaining_tokens: Mapped[int | None] = mapped_column(BigInteger)
    cost_usd: Mapped[float | None] = mapped_column(Float)
    answer_fingerprint: Mapped[str | None] = mapped_column(Text)
    failed_check: Mapped[str | None] = mapped_column(Text)
    via_proxy: Mapped[str | None] = mapped_column(Text)  # the egress proxy's origin, when there was one
    confirmation: Mapped[bool | None] = mapped_column(Boolean)  # a confirmation probe (migration 0009)


class Agent(Base):
    __tablename__ = "agents"

    name: Mapped[str] = mapped_column(Text, primary_key=True)
    last_seen: Mapped[datetime | None]  # heartbeat of the running service
    last_sample_at: Mapped[datetime | None]  # newest sample the writer stored for it
    healthy: Mapped[bool] = mapped_column(Boolean, server_default=text("true"))
    version: Mapped[str | None] = mapped_column(Text)


class Alert(Base):
    __tablename__ = "alerts"
    __table_args__ = (
        Index(None, "state"),
        # One live alert per rule and scope, even with two leaders racing for a moment.
        Index(
            "uq_alerts_live_scope",
            "rule",
            "scope_key",
            unique=True,
            postgresql_where=text("state IN ('pending', 'firing')"),
            sqlite_where=text("state IN ('pending', 'firing')"),
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    rule: Mapped[str] = mapped_column(Text)
    scope_kind: Mapped[str] = mapped_column(Text)  # target | provider_region | vantage | agent
    scope_key: Mapped[str] = mapped_column(Text)  # target id, or provider@region
    provider: Mapped[str | None] = mapped_column(Text)
    model: Mapped[str | None] = mapped_column(Text)
    region: Mapped[str | None] = mapped_column(Text)
    prompt: Mapped[str | None] = mapped_column(Text)
    state: Mapped[str] = mapped_column(Text)  # pending | firing | resolved
    severity: Mapped[str] = mapped_column(Text)
    metric: Mapped[str] = mapped_column(Text)
    value: Mapped[float | None] = mapped_column(Float)
    baseline: Mapped[float | None] = mapped_column(Float)
    # `kind: change` alerts compare labels: the new and the established value.
    value_text: Mapped[str | None] = mapped_column(Text)
    baseline_text: Mapped[str | None] = mapped_column(Text)
    fired_value: Mapped[float | None] = mapped_column(Float)  # the metric when the alert fired (migration 0006)
    worst_value: Mapped[float | None] = mapped_column(Float)  # its worst while firing: max, or min for tps
    started_at: Mapped[datetime]
    fired_at: Mapped[datetime | None]
    resolved_at: Mapped[datetime | None]
    last_evaluated_at: Mapped[datetime | None]
    last_notified_at: Mapped[datetime | None]
    clear_count: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    pending_count: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    summary: Mapped[str | None] = mapped_column(Text)
    silenced: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    # SLO burn-rate alerts (migration 0011_slos): the SLO, the window pair that holds, the budget left.
    slo: Mapped[str | None] = mapped_column(Text)
    burn_window: Mapped[str | None] = mapped_column(Text)
    budget_remaining: Mapped[float | None] = mapped_column(Float)
    # One alert pipeline (migration 0014_alert_pipeline, DESIGN §15): the alert inhibiting this one,
    # and what mutes its notifications (silence | maintenance).
    inhibited_by: Mapped[int | None] = mapped_column(BigInteger)
    muted: Mapped[str | None] = mapped_column(String(16))
    # Vantage points (migration 0009_vantage_points): the agent of an alert below the quorum, where the
    # condition holds and where it does not, and the network/provider split of a latency change.
    agent: Mapped[str | None] = mapped_column(Text)
    agents: Mapped[list[str] | None] = mapped_column(JSON)
    agents_clear: Mapped[list[str] | None] = mapped_column(JSON)
    attribution: Mapped[dict[str, Any] | None] = mapped_column(JSON)


class NotificationOutbox(Base):
    __tablename__ = "notification_outbox"
    __table_args__ = (
        UniqueConstraint("alert_id", "event", "notifier", "event_seq"),
        Index(None, "status", "next_attempt_at"),
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    alert_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("alerts.id", ondelete="CASCADE"))
    event: Mapped[str] = mapped_column(Text)  # firing | resolved | repeat
    # Distinguishes the n-th repeat of a firing alert; 0 for firing and resolved.
    event_seq: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    notifier: Mapped[str] = mapped_column(Text)
    payload: Mapped[dict[str, Any]]
    status: Mapped[str] = mapped_column(Text, server_default=text("'pending'"))  # pending | sent | failed
    attempts: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    next_attempt_at: Mapped[datetime]
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime]
    sent_at: Mapped[datetime | None]


class Silence(Base):
    __tablename__ = "silences"
    __table_args__ = (Index(None, "ends_at"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    match: Mapped[dict[str, Any]]
    starts_at: Mapped[datetime]
    ends_at: Mapped[datetime]
    reason: Mapped[str | None] = mapped_column(Text)
    created_by: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime]


class MaintenanceWindowRow(Base):
    """A maintenance window added at run time (`firsttoken maintenance add`, source `database`) or a
    provider's scheduled maintenance from its status page (source `provider`, `source_id` its id);
    migration 0015_maintenance. The config's windows are never stored."""

    __tablename__ = "maintenance_windows"
    __table_args__ = (UniqueConstraint("source", "source_id"), Index(None, "ends_at"))

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(Text)
    match: Mapped[dict[str, Any]]
    starts_at: Mapped[datetime]
    ends_at: Mapped[datetime]
    note: Mapped[str | None] = mapped_column(Text)
    source: Mapped[str] = mapped_column(String(16), server_default=text("'database'"))  # database | provider
    source_id: Mapped[str | None] = mapped_column(Text)
    created_by: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime]


# What `queries.health.period_grid` reads of a rollup row besides `hour` (migration 0003).
HOUR_COVERING_COLUMNS = (
    "target",
    "agent",
    "samples",
    "ok_count",
    "error_counts",
    "ttft_ms_sum",
    "ttft_ms_count",
    "ttft_ms_max",
)


class _RollupColumns:
    """What a rollup row holds besides its key: the same columns at every grain, so merging
    rows (an hour's per agent, a day's hours) is summing counts and adding histograms."""

    samples: Mapped[int] = mapped_column(Integer)
    ok_count: Mapped[int] = mapped_column(Integer)
    error_counts: Mapped[dict[str, Any]] = mapped_column(JSON)  # {error_kind: count}
    input_tokens_sum: Mapped[int] = mapped_column(BigInteger)
    output_tokens_sum: Mapped[int] = mapped_column(BigInteger)
    cost_usd_sum: Mapped[float] = mapped_column(Float, server_default=text("0"))
    ttft_ms_hist: Mapped[dict[str, Any]] = mapped_column(JSON)
    ttft_ms_count: Mapped[int] = mapped_column(Integer)
    ttft_ms_sum: Mapped[float | None] = mapped_column(Float)
    ttft_ms_min: Mapped[float | None] = mapped_column(Float)
    ttft_ms_max: Mapped[float | None] = mapped_column(Float)
    ttft_answer_ms_hist: Mapped[dict[str, Any]] = mapped_column(JSON)
    ttft_answer_ms_count: Mapped[int] = mapped_column(Integer)
    ttft_answer_ms_sum: Mapped[float | None] = mapped_column(Float)
    ttft_answer_ms_min: Mapped[float | None] = mapped_column(Float)
    ttft_answer_ms_max: Mapped[float | None] = mapped_column(Float)
    total_ms_hist: Mapped[dict[str, Any]] = mapped_column(JSON)
    total_ms_count: Mapped[int] = mapped_column(Integer)
    total_ms_sum: Mapped[float | None] = mapped_column(Float)
    total_ms_min: Mapped[float | None] = mapped_column(Float)
    total_ms_max: Mapped[float | None] = mapped_column(Float)
    tps_hist: Mapped[dict[str, Any]] = mapped_column(JSON)
    tps_count: Mapped[int] = mapped_column(Integer)
    tps_sum: Mapped[float | None] = mapped_column(Float)
    tps_min: Mapped[float | None] = mapped_column(Float)
    tps_max: Mapped[float | None] = mapped_column(Float)
    # Cache probes (DESIGN §13, migration 0012): the TTFT of each half of the cold/warm pairs,
    # the warm probes judged and those that hit, and the cache tokens the responses stated.
    cold_ttft_ms_hist: Mapped[dict[str, Any]] = mapped_column(JSON, server_default=text("'{}'"))
    cold_ttft_ms_count: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    cold_ttft_ms_sum: Mapped[float | None] = mapped_column(Float)
    cold_ttft_ms_min: Mapped[float | None] = mapped_column(Float)
    cold_ttft_ms_max: Mapped[float | None] = mapped_column(Float)
    warm_ttft_ms_hist: Mapped[dict[str, Any]] = mapped_column(JSON, server_default=text("'{}'"))
    warm_ttft_ms_count: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    warm_ttft_ms_sum: Mapped[float | None] = mapped_column(Float)
    warm_ttft_ms_min: Mapped[float | None] = mapped_column(Float)
    warm_ttft_ms_max: Mapped[float | None] = mapped_column(Float)
    cache_hits: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    cache_judged: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    cache_read_tokens_sum: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    cache_write_tokens_sum: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    updated_at: Mapped[datetime]


class RollupHourly(_RollupColumns, Base):
    """One row per (target, agent, hour). Histograms hold only ok samples (DESIGN §1)."""

    __tablename__ = "rollups_hourly"
    __table_args__ = (
        # Covering on PostgreSQL: the Health and Timeline pages sum these columns over every
        # target's hours; an index-only scan skips the wide histogram JSON of each row.
        Index(None, "hour", postgresql_include=list(HOUR_COVERING_COLUMNS)),
    )

    target: Mapped[str] = mapped_column(Text, primary_key=True)
    hour: Mapped[datetime] = mapped_column(primary_key=True)
    agent: Mapped[str] = mapped_column(Text, primary_key=True)


class RollupDaily(_RollupColumns, Base):
    """One row per (target, agent, UTC day): the merge of that day's hourly rows (migration 0008).

    Kept for completed days only (`day + 1 day <= now` when the rollup job ran), rebuilt whenever
    one of its hours is (`rollups.rollup_days`), so for every day up to the newest one here the
    daily rows equal the merge of the hourly rows. Long windows read days for their middle and
    hours for their edges (`queries.routes`). On PostgreSQL the JSON histograms are stored out
    of line and the packed ones inline (migration 0008), so that read scans narrow rows.
    """

    __tablename__ = "rollups_daily"
    __table_args__ = (Index(None, "day"),)

    target: Mapped[str] = mapped_column(Text, primary_key=True)
    day: Mapped[datetime] = mapped_column(primary_key=True)
    agent: Mapped[str] = mapped_column(Text, primary_key=True)
    # The histograms a long routes window merges, also packed (`histogram.pack`): numpy reads
    # them as they are, where their JSON text is ~2 M integers to parse for a 30-day ranking.
    ttft_ms_packed: Mapped[bytes] = mapped_column(LargeBinary)
    tps_packed: Mapped[bytes] = mapped_column(LargeBinary)


class RollupDirtyHour(Base):
    """Hours that received samples after the leader's regular sweep (spool replay,
    another agent's late batch): the leader recomputes and clears them."""

    __tablename__ = "rollup_dirty_hours"

    hour: Mapped[datetime] = mapped_column(primary_key=True)
    # Bumped on every mark, so clearing only removes the mark that was processed
    # (a counter, not a time: agents' clocks disagree).
    version: Mapped[int] = mapped_column(BigInteger, server_default=text("1"))
    marked_at: Mapped[datetime]


class ConfirmationRequest(Base):
    """The leader's ask (DESIGN §11): one vantage point began to see `target` degrade; every other agent
    that probes it probes it once more now. At most one per target per interval (the engine checks)."""

    __tablename__ = "confirmation_requests"
    __table_args__ = (Index(None, "requested_at"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    target: Mapped[str] = mapped_column(Text)
    seen_from: Mapped[str] = mapped_column(Text)  # the agent whose detector started: it does not re-probe
    requested_at: Mapped[datetime]


class JobState(Base):
    """Progress of the leader's periodic jobs, so a new leader resumes where the
    old one stopped (e.g. `rollups`: hours before `done_until` are final)."""

    __tablename__ = "job_state"

    name: Mapped[str] = mapped_column(Text, primary_key=True)
    done_until: Mapped[datetime | None]
    updated_at: Mapped[datetime]


class LeaderLease(Base):
    """Who runs the once-only work, until when, under which fencing token (monitor/leader/election.py).

    One row per role ("leader"). Times are the database's clock, never an agent's. The token
    grows by one at every change of holder; leader-only transactions check it first."""

    __tablename__ = "leader_lease"

    name: Mapped[str] = mapped_column(Text, primary_key=True)
    holder: Mapped[str] = mapped_column(Text)  # agent name and instance, for /healthz and the logs
    token: Mapped[int] = mapped_column(BigInteger)
    acquired_at: Mapped[datetime]
    expires_at: Mapped[datetime]


# A cache probe's halves (DESIGN §13): rollup metric -> (samples column, cache_state it keeps).
CACHE_ROLLUP_METRICS = {"cold_ttft_ms": ("ttft_ms", "cold"), "warm_ttft_ms": ("ttft_ms", "warm")}
ROLLUP_METRICS: tuple[str, ...] = SAMPLE_METRICS
ALL_ROLLUP_METRICS: tuple[str, ...] = (*ROLLUP_METRICS, *CACHE_ROLLUP_METRICS)  # every `<metric>_hist` column
ROLLUP_SUMS = ("samples", "ok_count", "input_tokens_sum", "output_tokens_sum", "cost_usd_sum")
CACHE_ROLLUP_SUMS = ("cache_hits", "cache_judged", "cache_read_tokens_sum", "cache_write_tokens_sum")


def rollup_source(metric: str) -> tuple[str, str | None]:
    """(samples column, cache_state kept or None for all) of a rollup metric."""
    return CACHE_ROLLUP_METRICS.get(metric, (metric, None))


PACKED_METRICS = ("ttft_ms", "tps")  # RollupDaily's `<metric>_packed` columns


class DetectorState(Base):
    """The alert engine's detector per (rule, series), checkpointed so a restarted
    or new leader resumes where the last one stopped (monitor/alerts/engine.py).

    Plain JSON, not JSONB: it is written often and never queried inside."""

    __tablename__ = "detector_state"

    rule: Mapped[str] = mapped_column(Text, primary_key=True)
    series: Mapped[str] = mapped_column(Text, primary_key=True)  # target id
    state: Mapped[dict[str, Any]] = mapped_column(JSON)
    last_ts: Mapped[datetime | None]  # started_at of the newest sample the detector has seen
    updated_at: Mapped[datetime]


class ProviderIncident(Base):
    """A provider's own incident, polled from its official status page (Statuspage v2 summary JSON):
    drawn beside ours on the timeline, and what each of our alerts is timed against."""

    __tablename__ = "provider_incidents"
    __table_args__ = (
        UniqueConstraint("provider", "source_id"),
        Index(None, "provider", "started_at"),
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    provider: Mapped[str] = mapped_column(Text)  # our provider name (config key)
    source_id: Mapped[str] = mapped_column(Text)  # the status page's incident id
    name: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(Text)  # investigating | identified | monitoring | resolved | postmortem
    impact: Mapped[str | None] = mapped_column(Text)  # none | minor | major | critical
    started_at: Mapped[datetime]
    resolved_at: Mapped[datetime | None]
    updated_at: Mapped[datetime]
    shortlink: Mapped[str | None] = mapped_column(Text)
    fetched_at: Mapped[datetime]


class IncidentRow(Base):
    """Our incident about one provider (DESIGN §16), drafted from the confirmed pages the alert pipeline
    writes (monitor/incidents): a draft until published (`status_site.publish`), investigating until
    resolved. Migration 0016_incidents."""

    __tablename__ = "incidents"
    __table_args__ = (Index(None, "provider", "state"), Index(None, "started_at"))

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    provider: Mapped[str] = mapped_column(Text)
    title: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))  # draft | published
    state: Mapped[str] = mapped_column(String(16))  # investigating | identified | monitoring | resolved
    components: Mapped[list[str]] = mapped_column(JSON)  # "provider/model" or "provider/*"
    started_at: Mapped[datetime]
    resolved_at: Mapped[datetime | None]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    published_at: Mapped[datetime | None]  # first published
    vantage_points: Mapped[int] = mapped_column(Integer, server_default=text("0"))  # the most an update announced
    official_id: Mapped[str | None] = mapped_column(Text)  # the provider's own incident (provider_incidents)


class IncidentAlertRow(Base):
    """An alert that opened or joined an incident; one alert (rule, scope, firing) joins one incident only."""

    __tablename__ = "incident_alerts"
    __table_args__ = (UniqueConstraint("rule", "scope_key", "fired_at"), Index(None, "incident_id"))

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    incident_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("incidents.id", ondelete="CASCADE"))
    rule: Mapped[str] = mapped_column(Text)  # the rule's or the SLO's name
    scope_key: Mapped[str] = mapped_column(Text)
    fired_at: Mapped[datetime]
    state: Mapped[str] = mapped_column(String(16))  # firing | resolved
    agents: Mapped[int] = mapped_column(Integer, server_default=text("0"))  # vantage points where it holds


class IncidentUpdateRow(Base):
    """One entry of an incident's timeline; subscribers hear of each once it is published."""

    __tablename__ = "incident_updates"
    __table_args__ = (Index(None, "incident_id", "at"), Index(None, "fanned_out", "published"))

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    incident_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("incidents.id", ondelete="CASCADE"))
    at: Mapped[datetime]
    kind: Mapped[str] = mapped_column(String(16))  # detected | confirmed | identified | update | resolved
    state: Mapped[str] = mapped_column(String(16))  # the incident's state this update announces
    message: Mapped[str] = mapped_column(Text)
    published: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    published_at: Mapped[datetime | None]
    created_by: Mapped[str | None] = mapped_column(Text)  # None: drafted by firsttoken
    # Its subscriber messages are queued (monitor/subscriptions/outbox.py).
    fanned_out: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))


class SubscriberRow(Base):
    """An email address or webhook URL subscribed to incident updates; double opt-in (DESIGN §16)."""

    __tablename__ = "status_subscribers"
    __table_args__ = (UniqueConstraint("kind", "address_key"), Index(None, "state"))

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(16))  # email | webhook
    address: Mapped[str] = mapped_column(Text)  # as given
    address_key: Mapped[str] = mapped_column(Text)  # compared: an email address in lower case, a URL as given
    state: Mapped[str] = mapped_column(String(16))  # pending | confirmed | unsubscribed
    base_url: Mapped[str | None] = mapped_column(Text)  # the site's address as the subscriber reached it
    created_at: Mapped[datetime]
    confirmed_at: Mapped[datetime | None]
    unsubscribed_at: Mapped[datetime | None]
    confirm_requests: Mapped[int] = mapped_column(Integer, server_default=text("0"))  # within the last day
    last_confirm_request_at: Mapped[datetime | None]


class SubscriberOutboxRow(Base):
    """One message to one subscriber: a confirmation request, or one published incident update (once)."""

    __tablename__ = "subscriber_outbox"
    __table_args__ = (
        UniqueConstraint("subscriber_id", "update_id"),
        Index(None, "status", "next_attempt_at"),
        Index(None, "created_at"),
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    subscriber_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("status_subscribers.id", ondelete="CASCADE"))
    update_id: Mapped[int | None] = mapped_column(BigInteger, ForeignKey("incident_updates.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(16))  # confirm | update
    status: Mapped[str] = mapped_column(String(16))  # pending | sent | failed | cancelled
    attempts: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    next_attempt_at: Mapped[datetime]
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime]
    sent_at: Mapped[datetime | None]


class StatusSecret(Base):
    """The key that signs subscription links when FIRSTTOKEN_STATUS_SECRET is not set: random, made once."""

    __tablename__ = "status_secrets"

    name: Mapped[str] = mapped_column(Text, primary_key=True)
    value: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime]


class ReportRun(Base):
    """One scheduled report's period (`reports:` entry, ISO week): claimed, then sent once (DESIGN §17).
    Unique (report, period): a second leader, or a second run, finds the row and leaves it (monitor.reports.runs).
    Migration 0017_report_runs."""

    __tablename__ = "report_runs"
    __table_args__ = (UniqueConstraint("report", "period"), Index(None, "status", "lease_until"))

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    report: Mapped[str] = mapped_column(Text)  # the `reports:` entry's name
    period: Mapped[str] = mapped_column(Text)  # 2026-W48
    status: Mapped[str] = mapped_column(String(16))  # pending | sent | failed
    attempts: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    holder: Mapped[str | None] = mapped_column(Text)  # the agent whose claim it is (or was last)
    lease_until: Mapped[datetime]  # a claim's end, or when a failed send may be tried again
    created_at: Mapped[datetime]
    sent_at: Mapped[datetime | None]
    recipients: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    message_id: Mapped[str | None] = mapped_column(Text)
    last_error: Mapped[str | None] = mapped_column(Text)
