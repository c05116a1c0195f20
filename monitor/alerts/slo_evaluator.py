"""SLO burn-rate alerts (DESIGN §12), run by the leader beside the detectors' round (engine.py).

One round:
1. read the probes started since each SLO scope's cursor (feed.fetch_new), the live SLO alerts,
   active silences and unhealthy agents;
2. feed each scope's `ScopeBurn` (monitor.slo.burn: count-based windows per agent, the §11 quorum)
   its new probes, oldest first, good or bad by the SLO's `good:`; cancelled probes and probes of
   agents that reach no provider are skipped, as the detectors skip them;
3. fold the firings, escalations and resolutions into alert records (`rule` is `slo:<name>`, `value`
   the burn rate over the holding pair's long window, `baseline` its factor), with the budget left
   over the period from the rollups (queries.slo_report) for the scopes that fire;
4. one transaction stores them and enqueues their notifications (store.apply_changes): the same
   outbox, silences and notifiers as every other alert. An escalation from ticket to page is sent
   as a `repeat` (a firing body with the new severity); the resolution goes to every notifier the
   alert was sent to.

Nothing is checkpointed: a new or restarted leader rebuilds each scope from the probes of its
longest window (a tenth of the period) without notifying what it replays; the live alerts in the
database say what was already sent, so nothing is paged twice and nothing is lost.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine, select

from monitor.alerts.feed import _COLUMNS as POINT_COLUMNS
from monitor.alerts.feed import NOT_MEASURED, Point, fetch_new
from monitor.alerts.records import RESOLVED, Change
from monitor.alerts.silences import active_silences
from monitor.alerts.slo_records import (
    RULE_PREFIX,
    close_record,
    load_live_slo,
    notify,
    observed,
    open_record,
    rule_of,
    summary_of,
)
from monitor.alerts.store import apply_changes
from monitor.slo.burn import ESCALATED, ScopeBurn, Verdict
from monitor.slo.burn import FIRING as FIRED
from monitor.slo.burn import RESOLVED as CLEARED
from monitor.slo.good import is_good
from monitor.slo.scopes import SloScope, members
from monitor.slo.windows import SEVERITY_RANK, TICKET
from monitor.storage.models import SampleRow
from monitor.storage.queries.agents import unhealthy_agents

log = logging.getLogger(__name__)

BUDGET_EVERY_S = 60.0  # a firing scope's budget is re-read from the rollups at most this often
STREAM_ROWS = 5000  # rows per fetch while a series is rebuilt from history
_S = SampleRow.__table__.c


@dataclass
class _Series:
    definition: object  # the SLO as configured when the series was built; an edit rebuilds it
    scope: SloScope
    targets: tuple[str, ...]
    burn: ScopeBurn
    cursor: datetime | None = None
    fired_ts: float | None = None  # when the current firing began
    last: Verdict | None = None  # the last verdict while firing


@dataclass(frozen=True, slots=True)
class SloRoundStats:
    probes: int = 0
    changes: int = 0
    queued: int = 0


class SloEvaluator:
    def __init__(self, settle_s: float = 15.0) -> None:
        self.settle_s = settle_s
        self._series: dict[tuple[str, str], _Series] = {}
        self._budgets: dict[tuple[str, str], tuple[float, float | None]] = {}  # -> (read at, remaining)

    def evaluate(self, engine: Engine, config, now: datetime | None = None) -> SloRoundStats:
        try:
            return self._evaluate(engine, config, now or datetime.now(UTC))
        except Exception:
            self._series.clear()  # the database is the truth: rebuild next round
            raise

    def _evaluate(self, engine: Engine, config, now: datetime) -> SloRoundStats:
        slos = {s.name: s for s in config.slos}
        self._sync(slos, config.targets)
        unhealthy = unhealthy_agents(engine)
        until = now - timedelta(seconds=self.settle_s)
        fresh = {k for k, series in self._series.items() if series.cursor is None}
        fed = sum(self._rebuild(engine, slos[k[0]], self._series[k], now, until, unhealthy) for k in sorted(fresh))
        cursors: dict[str, datetime | None] = {}
        for key, series in self._series.items():
            for target in series.targets if key not in fresh else ():
                if target not in cursors or _older(series.cursor, cursors[target]):
                    cursors[target] = series.cursor
        with engine.connect() as conn:
            # Every cursor is set (new series were rebuilt above): the floor only has to be below them all.
            floor = min((c for c in cursors.values() if c is not None), default=until)
            points = fetch_new(conn, cursors, floor=floor, until=until)
            live = load_live_slo(conn)
            silences = active_silences(conn, config.silences, now)

        changes: list[Change] = []
        for (name, key), series in self._series.items():
            slo = slos[name]
            bootstrap = (name, key) in fresh
            merged = sorted(
                (p for t in series.targets for p in points.get(t, ()) if p.started_at > series.cursor),
                key=lambda p: (p.started_at, p.id),
            )
            events: list[Verdict] = []
            for p in merged:
                verdict = self._feed(slo, series, p, unhealthy)
                fed += verdict is not None
                if verdict is not None and verdict.event is not None:
                    events.append(verdict)
            record = live.pop((rule_of(name), key), None)
            changes += self._fold(engine, config, slo, series, record, events, bootstrap, silences, now)
        for record in live.values():  # SLOs or scopes no longer configured: resolve what they left open
            changes += close_record(record, now, "no longer evaluated")
        if not changes:
            return SloRoundStats(fed)
        with engine.begin() as conn:
            queued = apply_changes(
                conn, changes, config.notifiers, dashboard_url=config.dashboard_url, now=now, secrets=config.secrets
            )
        if queued or any(c.record.state == RESOLVED or c.record.id is None for c in changes):
            log.info("slo: %d alert changes, %d notifications queued", len(changes), queued)
        return SloRoundStats(fed, len(changes), queued)

    def _feed(self, slo, series: _Series, p, unhealthy) -> Verdict | None:
        series.cursor = p.started_at
        if p.agent in unhealthy or p.error_kind == NOT_MEASURED:
            return None  # that vantage point reaches no provider / the probe was cut short by a stop
        values = {"ttft_ms": p.ttft_ms, "ttft_answer_ms": p.ttft_answer_ms, "total_ms": p.total_ms, "tps": p.tps}
        good = is_good(slo.good, p.ok, p.error_kind, values)
        verdict = series.burn.observe(p.agent, p.started_at.timestamp(), not good)
        if verdict.event == FIRED:
            series.fired_ts = verdict.timestamp_s
        if verdict.window is not None:
            series.last = verdict
        return verdict

    def _rebuild(self, engine: Engine, slo, series: _Series, now: datetime, until: datetime, unhealthy) -> int:
        """A new series replays its longest window of raw samples, streamed oldest first (a month's SLO
        holds 3 days of every probe of its scope: never all in memory as rows), notifying nothing:
        the live alerts in the database say what was already sent."""
        floor = now - timedelta(seconds=max(w.long_s for w in series.burn.windows))
        query = (
            select(*POINT_COLUMNS)
            .where(_S.target.in_(series.targets), _S.started_at > floor, _S.started_at <= until)
            .order_by(_S.started_at, _S.id)
        )
        fed = 0
        with engine.connect() as conn:
            for row in conn.execution_options(stream_results=True, yield_per=STREAM_ROWS).execute(query):
                fed += self._feed(slo, series, Point(*row), unhealthy) is not None
        series.cursor = max(series.cursor or until, until)
        return fed

    def _sync(self, slos, targets) -> None:
        wanted: dict[tuple[str, str], tuple[SloScope, tuple[str, ...]]] = {}
        for name, slo in slos.items():
            for key, (scope, ids) in members(slo, targets).items():
                wanted[(name, key)] = (scope, ids)
        for key in [k for k in self._series if k not in wanted or self._series[k].definition != slos[k[0]]]:
            del self._series[key]
        for (name, key), (scope, ids) in wanted.items():
            series = self._series.get((name, key))
            if series is not None and series.targets != ids:
                del self._series[(name, key)]  # a target joined or left the scope: rebuild from history
            if (name, key) not in self._series:
                slo = slos[name]
                self._series[(name, key)] = _Series(slo, scope, ids, ScopeBurn(slo.period_s, slo.error_budget))

    def _fold(self, engine, config, slo, series: _Series, record, events, bootstrap, silences, now) -> list[Change]:
        out: list[Change] = []
        escalated = False
        if bootstrap and series.burn.severity is not None and record is None:
            at = datetime.fromtimestamp(series.fired_ts or now.timestamp(), UTC)
            record = open_record(slo, series.scope, at, series.burn.severity or TICKET)
        for verdict in events:
            at = datetime.fromtimestamp(verdict.timestamp_s, UTC)
            if verdict.event == FIRED and record is None:
                record = open_record(slo, series.scope, at, verdict.severity)
            elif verdict.event == ESCALATED and record is not None:
                escalated = escalated or record.last_notified_at is not None
                record = replace(record, severity=verdict.severity)
            elif verdict.event == CLEARED and record is not None:
                out += close_record(observed(record, series.last), at, "")
                record = None
        if record is not None and series.burn.severity is None:  # rebuilt state says it is over
            out += close_record(record, now, "")
            record = None
        if record is None:
            return out
        if SEVERITY_RANK.get(series.burn.severity or "", 0) > SEVERITY_RANK.get(record.severity, 0):
            escalated = escalated or record.last_notified_at is not None
            record = replace(record, severity=series.burn.severity)
        record = observed(record, series.last)
        record = replace(
            record, budget_remaining=self._budget(engine, config, slo, series.scope, now), last_evaluated_at=now
        )
        record = replace(record, summary=summary_of(slo, series.scope, record))
        record, events_out = notify(record, escalated, any(s.mutes(series.scope) for s in silences), now)
        out.append(Change(record, events_out))
        return out

    def _budget(self, engine, config, slo, scope: SloScope, now: datetime) -> float | None:
        from monitor.storage.queries.slo_report import slo_report

        key = (slo.name, scope.key)
        cached = self._budgets.get(key)
        if cached is not None and now.timestamp() - cached[0] < BUDGET_EVERY_S:
            return cached[1]
        report = slo_report(engine, slo, config.targets, now, scope_keys={scope.key})
        remaining = report.scopes[0].budget.remaining if report.scopes else None
        self._budgets[key] = (now.timestamp(), remaining)
        return remaining


def slo_jobs(evaluate_every_s: float = 30.0, settle_s: float = 15.0) -> dict[str, tuple[float, object]]:
    """The leader's SLO job for `ServiceOptions.leader_jobs`, beside `engine.alert_jobs`' (same cadence)."""
    return {"slo.evaluate": (evaluate_every_s, SloEvaluator(settle_s=settle_s).evaluate)}


def _older(a: datetime | None, b: datetime | None) -> bool:
    if a is None:
        return b is not None
    return b is not None and a < b


__all__ = ["RULE_PREFIX", "SloEvaluator", "SloRoundStats", "rule_of", "slo_jobs"]
