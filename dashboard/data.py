"""Everything the pages read, cached; the only dashboard module that reads the database.

Queries live in `monitor.storage.queries` (values in, frozen values out); here
they get an engine, a cache with a TTL sized to how fast the answer can change,
and one kind of failure: `Unavailable`, carrying a one-line message the page
shows instead of a traceback.

Nothing here writes (the dashboard's few writes, incidents, are dashboard/writes.py's). On PostgreSQL
every session is read-only (`default_transaction_read_only`), with JIT off (it costs more than it saves on
these short queries), enough work_mem that a month of rollups sorts in memory,
and a statement timeout so a slow query cannot pin a connection forever.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import streamlit as st
from sqlalchemy import Engine

from dashboard.settings import Settings, load_settings
from monitor.gcpause import gc_paused
from monitor.routing.rank import RankedRoute
from monitor.storage.queries import alertviews, compare, health, overview, routes, sampleviews, spend, trends
from monitor.storage.queries import cache_figures as cache_queries
from monitor.storage.queries import failures as failure_queries
from monitor.storage.queries import targets as target_queries
from monitor.storage.queries.agents import AgentInfo, AgentReach, agent_reach, list_agents
from monitor.storage.queries.cache_figures import CacheFigures

T = TypeVar("T")
TargetRef = target_queries.TargetRef
# work_mem 16 MB: the 30-day trend sorts ~15,000 rollup rows with their histograms (~5 MB), which
# spilled to disk at the default 4 MB (+8 ms); a dashboard holds at most a handful of connections.
PG_OPTIONS = "-c default_transaction_read_only=on -c jit=off -c statement_timeout=20000 -c work_mem=16MB"
SHORT_TTL_S = 20
REACH_WINDOW = timedelta(minutes=15)  # the Overview's per-agent reach: each vantage point's recent probes


class Unavailable(Exception):
    """The database cannot answer; `str()` is one line for the reader."""


@st.cache_resource(ttl=60, show_spinner=False)
def settings() -> Settings:
    return load_settings()


@st.cache_resource(show_spinner=False)
def _engine(url: str) -> Engine:
    from monitor.storage.db import make_engine, normalize_url

    if normalize_url(url).get_backend_name() == "sqlite":
        return make_engine(url)
    return make_engine(url, connect_args={"options": PG_OPTIONS}, pool_size=4)


def engine() -> Engine:
    return _engine(settings().database_url)


def _one_line(exc: BaseException) -> str:
    from monitor.storage.db import db_error_line, redact_url

    return f"cannot read the database {redact_url(settings().database_url)}: {db_error_line(exc)}"


def guarded(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    try:
        with gc_paused():  # bulk rows, no cycles: see monitor.gcpause
            return fn(*args, **kwargs)
    except Unavailable:
        raise
    except Exception as exc:  # any driver or SQL error: the page says so in one line
        raise Unavailable(_one_line(exc)) from exc


def now() -> datetime:
    """The end of the current 10-second step: a rerun within the same 10 s hits the cache, and a window
    that ends "now" holds every sample already written. (Rounded down, it left out the newest: an alert
    link opened as the page arrived showed "no samples" of the very probes that had just fired it.)"""
    t = datetime.now(UTC)
    return t.replace(second=t.second // 10 * 10, microsecond=0) + timedelta(seconds=10)


@st.cache_data(ttl=15, show_spinner=False)
def schema_problem() -> str | None:
    """None when the database is migrated and reachable, else what to do about it."""
    from monitor.storage.migrate import check_schema

    try:
        return check_schema(engine())
    except Exception as exc:
        return _one_line(exc)


@st.cache_data(ttl=10, show_spinner=False)
def replica_lag_s() -> float | None:
    """How far behind its primary the replica the dashboard reads is; None when it reads a primary."""
    from monitor.storage.replica import replica_lag_s as lag_of

    try:
        return lag_of(engine())
    except Exception:  # an unreachable database says so on the page itself
        return None


@st.cache_data(ttl=60, show_spinner=False)
def targets() -> tuple[TargetRef, ...]:
    return tuple(guarded(target_queries.list_targets, engine()))


def refs(ids: tuple[str, ...]) -> list[TargetRef]:
    by_id = {t.id: t for t in targets()}
    return [by_id[i] for i in ids if i in by_id]


@dataclass(frozen=True)
class OverviewData:
    overview: overview.Overview
    live_alerts: tuple[alertviews.AlertView, ...]
    agents: tuple[AgentInfo, ...]
    spend_month: tuple[spend.ProviderSpend, ...] = ()  # what the probes cost since the 1st (UTC)
    reach: tuple[AgentReach, ...] = ()  # each vantage point's last 15 minutes, per provider


@st.cache_data(ttl=SHORT_TTL_S, show_spinner=False)
def overview_data(at: datetime) -> OverviewData:
    eng = engine()
    return OverviewData(
        guarded(overview.overview, eng, list(targets()), at),
        tuple(guarded(alertviews.live_alerts, eng)),
        tuple(guarded(list_agents, eng)),
        tuple(guarded(spend.spend_by_provider, eng, spend.month_start(at))),
        tuple(guarded(agent_reach, eng, at - REACH_WINDOW)),
    )


@st.cache_data(ttl=SHORT_TTL_S, show_spinner=False)
def trend(ids: tuple[str, ...], start: datetime, end: datetime, split_by: str) -> trends.Trend:
    return guarded(trends.trend, engine(), refs(ids), start, end, split_by)


@st.cache_data(ttl=SHORT_TTL_S, show_spinner=False)
def alerts_between(start: datetime, end: datetime, fired_only: bool = True) -> tuple[alertviews.AlertView, ...]:
    return tuple(guarded(alertviews.alerts_between, engine(), start, end, fired_only=fired_only))


@st.cache_data(ttl=SHORT_TTL_S, show_spinner=False)
def model_stats(ids: tuple[str, ...], start: datetime, end: datetime) -> tuple[compare.ModelStats, ...]:
    return tuple(guarded(compare.compare, engine(), refs(ids), start, end))


@st.cache_data(ttl=SHORT_TTL_S, show_spinner=False)
def recorded_costs(ids: tuple[str, ...], start: datetime, end: datetime) -> dict[str, spend.RecordedCost]:
    return guarded(spend.recorded_cost_by_target, engine(), ids, start, end)


@st.cache_data(ttl=SHORT_TTL_S, show_spinner=False)
def cache_figures(ids: tuple[str, ...], start: datetime, end: datetime) -> dict[str, CacheFigures]:
    """What prompt caching is worth per cache-probe target over [start, end) (DESIGN §13)."""
    return guarded(cache_queries.cache_figures, engine(), ids, end, end - start)


@st.cache_data(ttl=SHORT_TTL_S, show_spinner=False)
def ranked_routes(at: datetime, window: timedelta = timedelta(minutes=30)) -> tuple[RankedRoute, ...]:
    """Every route ranked per canonical model and prompt (`firsttoken routes`), default floor and order."""
    ranked, _ = guarded(routes.load_routes, engine(), at, window)
    return tuple(ranked)


@st.cache_data(ttl=SHORT_TTL_S, show_spinner=False)
def period_grid(ids: tuple[str, ...] | None, start: datetime, end: datetime, period: timedelta) -> health.PeriodGrid:
    """Rollups for ranges of a day or more, raw samples below (`queries.tiers`)."""
    return guarded(health.grid, engine(), start, end, period, list(ids) if ids is not None else None)


UPTIME_WINDOWS = {"24 h": timedelta(hours=24), "7 d": timedelta(days=7), "30 d": timedelta(days=30)}
HEALTH_DAYS = 90
NOW = timedelta(hours=2)  # "current" status: the last two hours


@dataclass(frozen=True)
class HealthData:
    current: health.Current  # every target: the last two hours (by the quorum) against the 24 hours before
    daily: health.PeriodGrid | None  # the chosen provider: 90 daily columns, uptime windows in `window_totals`
    incidents: tuple[alertviews.AlertView, ...]  # those the quorum confirmed (DESIGN §16)


@st.cache_data(ttl=60, show_spinner=False)
def health_data(at: datetime, provider: str | None) -> HealthData:
    """Every provider's current status, and one provider's 90 days (one provider at a time:
    reading 90 days of every target would be 5x the rows for bars nobody sees at once).

    As the public status counts them (monitor.http.statussite): minutes down by the quorum of
    vantage points (`statushistory`), never one agent's, and only the alerts the quorum confirmed."""
    from dashboard.health_view import quorum_current, quorum_grid
    from monitor.http.planned import excluded
    from monitor.storage.queries import statushistory

    eng = engine()
    start = statushistory.day_start(at, HEALTH_DAYS)
    # Our maintenance windows count neither up nor down there either.
    planned = excluded(guarded(_windows, settings(), start, at), settings().slo_targets)
    live = guarded(statushistory.live, eng, at - NOW, at, [t.id for t in targets()], planned)
    current = quorum_current(live, guarded(health.current, eng, at, NOW))
    daily = None
    if provider is not None:
        ids = [t.id for t in targets() if t.provider == provider]
        windows = {name: at - span for name, span in UPTIME_WINDOWS.items()}
        daily = quorum_grid(guarded(statushistory.daily, eng, start, at, ids, windows, planned))
    incidents = guarded(alertviews.alerts_between, eng, start, at, fired_only=True)
    return HealthData(current, daily, tuple(a for a in incidents if a.quorum_confirmed))


@dataclass(frozen=True)
class AlertsData:
    live: tuple[alertviews.AlertView, ...]
    past: tuple[alertviews.AlertView, ...]
    silences: tuple[alertviews.SilenceView, ...]
    deliveries: tuple[alertviews.DeliveryView, ...]


@st.cache_data(ttl=60, show_spinner=False)
def official_between(start: datetime, end: datetime) -> list:
    """Providers' own incidents (their status pages, polled by the leader) overlapping [start, end)."""
    from monitor.storage.queries.official import incidents_between

    return guarded(incidents_between, engine(), start, end)


@st.cache_data(ttl=SHORT_TTL_S, show_spinner=False)
def alerts_data(at: datetime, days: int = 30) -> AlertsData:
    eng = engine()
    since = at - timedelta(days=days)
    past = [a for a in guarded(alertviews.alerts_between, eng, since, at) if a.state == "resolved"]
    return AlertsData(
        tuple(guarded(alertviews.live_alerts, eng)),
        tuple(past),
        tuple(guarded(alertviews.silences, eng, since)),
        tuple(guarded(alertviews.deliveries, eng)),
    )


@st.cache_data(ttl=SHORT_TTL_S, show_spinner=False)
def incidents(at: datetime, limit: int = 30) -> tuple:
    """The newest incidents with their updates, drafts included (DESIGN §16); `at` keys the cache.
    dashboard/writes.py publishes, updates and resolves them."""
    from monitor.incidents.views import list_incidents

    def read(eng: Engine) -> list:
        with eng.connect() as conn:
            return list_incidents(conn, limit=limit)

    return tuple(guarded(read, engine()))


@st.cache_data(ttl=SHORT_TTL_S, show_spinner=False)
def samples(target: str, start: datetime, end: datetime, outcome: str, kinds: tuple[str, ...], limit: int):
    rows = guarded(
        sampleviews.target_samples, engine(), target, start, end, outcome=outcome, error_kinds=kinds, limit=limit
    )
    return tuple(rows)


@st.cache_data(ttl=SHORT_TTL_S, show_spinner=False)
def alert(alert_id: int) -> alertviews.AlertView | None:
    return guarded(alertviews.alert, engine(), alert_id)


@st.cache_data(ttl=SHORT_TTL_S, show_spinner=False)
def failures(target: str, start: datetime, end: datetime) -> tuple[tuple[datetime, str], ...]:
    return tuple(guarded(failure_queries.failures, engine(), target, start, end))


@st.cache_data(ttl=SHORT_TTL_S, show_spinner=False)
def error_kinds(target: str, start: datetime, end: datetime) -> tuple[str, ...]:
    return tuple(guarded(sampleviews.error_kinds_of, engine(), target, start, end))


@st.cache_data(ttl=60, show_spinner=False)
def slo_reports(at: datetime) -> tuple:
    """Every configured SLO's scopes where they stand now (`firsttoken slo`), from the rollups."""
    from monitor.storage.queries.slo_report import slo_reports as read_reports

    conf = settings()
    longest = max((s.period_s for s in conf.slos), default=0.0)
    maintenance = guarded(_maintenance, conf, at - timedelta(seconds=longest), at)
    return tuple(guarded(read_reports, engine(), conf.slos, conf.slo_targets, at, maintenance))


@st.cache_data(ttl=300, show_spinner=False)
def slo_months(at: datetime, provider: str, months: int = 3) -> tuple:
    """Per SLO scope that holds the provider's targets: attainment per calendar month (UTC), oldest first."""
    from monitor.storage.queries.slo_report import month_starts, monthly_attainment

    conf = settings()
    refs = [t for t in conf.slo_targets if t.provider == provider]
    maintenance = guarded(_maintenance, conf, month_starts(at, months)[0], at)
    return tuple(guarded(monthly_attainment, engine(), conf.slos, refs, conf.slo_targets, at, months, maintenance))


def _windows(conf, start: datetime, end: datetime) -> list:
    """Every maintenance window overlapping [start, end) (DESIGN §16)."""
    from monitor.maintenance.store import windows_between

    with engine().connect() as conn:
        return windows_between(conn, conf.maintenance, start, end)


def _maintenance(conf, start: datetime, end: datetime):
    """Our maintenance windows over the SLO targets (DESIGN §16): their probes leave the SLO figures."""
    from monitor.maintenance.store import coverage_between

    with engine().connect() as conn:
        return coverage_between(conn, conf.maintenance, conf.slo_targets, start, end)


def _report_targets(conf) -> tuple:
    """What a report covers: the configured targets, or without a config every target in the database."""
    return tuple(conf.config.targets) if conf.config is not None else targets()


@st.cache_resource(ttl=300, show_spinner=False, max_entries=32)
def weekly_report(week: str, zone: str, providers: tuple[str, ...] = ()):
    """The weekly report (DESIGN §17) of ISO week `week` in time zone `zone`, as `report weekly` builds it.
    A resource, not data: it holds PNG charts and is never changed, so it is shared, not pickled."""
    from zoneinfo import ZoneInfo

    from monitor.reports.schedule import parse_week
    from monitor.reports.weekly import build_weekly_report
    from monitor.reports.weekly.report import title_for

    conf = settings()
    return guarded(
        build_weekly_report,
        engine(),
        _report_targets(conf),
        parse_week(week, ZoneInfo(zone)),
        providers=providers,
        slos=conf.slos,
        maintenance=conf.maintenance,
        title=title_for(conf.config),
    )


@st.cache_resource(ttl=300, show_spinner=False, max_entries=16)
def sla_report(month: str):
    """The SLA report (DESIGN §17) of calendar month `month` (UTC) for every provider with a `contract:`."""
    from monitor.reports.sla import build_sla_report
    from monitor.reports.sla import month as month_period

    return guarded(build_sla_report, engine(), settings().config, month_period(month))


def page_loads(at: datetime) -> dict[str, Callable[[], object]]:
    """What each page reads in its default view (the benchmark times these)."""
    ids = tuple(t.id for t in targets())
    first = ids[:1]
    provider = targets()[0].provider if ids else ""
    twenty = tuple(t.id for t in targets() if t.provider == provider)[:20]
    day, month, week = at - timedelta(days=1), at - timedelta(days=30), at - timedelta(days=7)
    return {
        "Overview": lambda: overview_data(at),
        "Trends: 20 targets, last hour": lambda: trend(twenty, at - timedelta(hours=1), at, "provider/model"),
        "Trends: 20 targets, 24 h": lambda: trend(twenty, day, at, "provider/model"),
        "Trends: 20 targets, 30 d": lambda: (trend(twenty, month, at, "provider/model"), alerts_between(month, at)),
        "Trends: 1 target, 30 d": lambda: (trend(first, month, at, "target"), alerts_between(month, at)),
        "Compare: all models, 24 h": lambda: model_stats(ids, day, at),
        "Routes: all models, 30 min (Compare)": lambda: ranked_routes(at),
        "Routes: all models, 7 d": lambda: ranked_routes(at, timedelta(days=7)),
        "Routes: all models, 30 d": lambda: ranked_routes(at, timedelta(days=30)),
        "Timeline: all targets, 24 h (default)": lambda: (
            period_grid(None, day, at, timedelta(hours=1)),
            alerts_between(day, at),
        ),
        "Timeline: all targets, 7 d": lambda: (
            period_grid(None, week, at, timedelta(hours=1)),
            alerts_between(week, at),
        ),
        "Provider health: 90 days": lambda: health_data(at, provider),
        "SLOs: every SLO and scope, 30 d": lambda: slo_reports(at),
        "Provider health: SLO attainment, 3 months": lambda: slo_months(at, provider),
        "Alerts": lambda: alerts_data(at),
        "Samples: 1 target, 24 h": lambda: samples(first[0] if first else "", day, at, "all", (), 5000),
    }
