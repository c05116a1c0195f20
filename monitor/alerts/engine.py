"""The alert engine (DESIGN §5, §9, §15), run by the leader every `evaluate_every_s`:
read → detect → round → enrich → write.

1. read what is new: samples started since each series' cursor (feed.py, a few queries for any
   number of targets), the live alerts (rules' and SLOs'), active silences, unhealthy agents;
2. detect: feed each (rule, target, agent) detector its new samples, oldest first, folding the
   quorum of vantage points in as it goes (series.py), and each SLO scope's burn its probes
   (slo_source.py): failed probes count for error_rate and burn only, cancelled probes not at all,
   samples from agents that cannot reach any provider are skipped;
3. round: the pure stages of round.py turn the verdicts, live alerts, silences and `now` into alert
   changes and notification events — one pipeline for rules and SLOs alike;
4. enrich the notifying changes (the alternative route, monitor.alerts.alternatives), then write:
   one transaction stores the changes, enqueues the notifications, and checkpoints every detector
   that made a transition (checkpoints.py).

Detectors live in memory between rounds; a restarted or newly elected leader loads the checkpoints
and replays the samples since, which reproduces them (detectors are deterministic) without
repeating a recorded transition; SLO burns rebuild from raw samples. Any failure drops the memory,
so the next round starts again from the database. Samples started in the last `settle_s` wait for
the next round: a slow probe is written after a fast one that started later, and a detector only
takes samples in time order. A slow probe can lag longer than that (up to its timeout); each round
also reads the slow and failed probes of that lag again (WRITE_MARGIN_S) and every series takes only
what it has not seen.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine

from monitor.alerts import checkpoints
from monitor.alerts.alternatives import alternatives
from monitor.alerts.attribution import PathHistory
from monitor.alerts.detectors.detect import DetectorSettings, SeriesDetector, settings_from_rule
from monitor.alerts.feed import Late, fetch_new
from monitor.alerts.grouping import GroupPolicy
from monitor.alerts.outbox import OutboxDelivery, RetryPolicy
from monitor.alerts.records import FIRING, Change, RuleView
from monitor.alerts.round import RoundInput, RuleSource, run_round
from monitor.alerts.scope import TARGET, Scope
from monitor.alerts.series import RuleRound, Series, SeriesKey, checkpoint_of, feed_pair
from monitor.alerts.signing import alert_links
from monitor.alerts.silences import active_silences
from monitor.alerts.slo_fold import SloVerdicts
from monitor.alerts.slo_source import SloBurns
from monitor.alerts.store import apply_changes, group_resolutions, load_live, runbooks_of
from monitor.config import Alerting
from monitor.incidents.store import draft_incidents
from monitor.maintenance.store import windows_through
from monitor.storage.queries import confirmations
from monitor.storage.queries.agents import unhealthy_agents

log = logging.getLogger(__name__)

RELEASE_LOOKBACK_S = 6 * 3600.0  # group resolutions older than this hold back no straggler any more
PROBING_INTERVALS = 3  # an agent probed a target "within the rule's window": also within 3 of its intervals
# A series this far behind its target's newest sample belongs to an agent that left (or stopped): it no
# longer holds the target's read cursor back. Wider than a checkpoint's age, so a replay misses nothing.
DEPARTED_BEHIND = timedelta(hours=1)
# A probe is written when it ends: up to its timeout after it started, plus the writer's flush. Reading
# from the cursor alone misses a slow probe that started before a faster one already read (another
# agent's, or another target's under one SLO) whenever the timeout is longer than `settle_s` — with the
# defaults (60 s, 15 s) a timed-out probe from a vantage point new to the target, or one of several
# targets under one SLO, was never judged. So each round also reads the probes that took long enough to
# be late (at least settle_s less this margin, or failed) started up to timeout + this margin - settle_s
# before the cursor (feed.Late: a few rows, where reading every row of that span cost 1.5x per sample),
# and every series skips what it has already seen (rules by their (target, agent) cursor, SLOs by theirs).
WRITE_MARGIN_S = 5.0


@dataclass(frozen=True, slots=True)
class EngineOptions:
    settle_s: float = 15.0  # samples younger than this wait a round (see the module docstring)
    bootstrap_s: float = 3 * 3600.0  # history a new detector warms up on; also the furthest a cursor catches up
    checkpoint_every_s: float = 600.0  # detectors without transitions are checkpointed this often (~6 KB each)
    max_checkpoints_per_round: int = 5000  # spreads a 10,000-target fleet's checkpoints over rounds
    group: GroupPolicy = field(default_factory=GroupPolicy)


@dataclass(frozen=True, slots=True)
class RoundStats:
    samples: int = 0
    evaluations: int = 0
    changes: int = 0  # alert rows written
    transitions: int = 0  # of which opened, deleted or resolved
    queued: int = 0
    checkpoints: int = 0
    elapsed_s: float = 0.0
    confirmations: int = 0  # confirmation probes asked of the other vantage points
    probes_judged_by_slos: int = 0
    applied: tuple[Change, ...] = ()  # this round's changes, as written (firsttoken backtest reads them)


@dataclass
class _Detected:
    """What the detect step found: per rule its round, and what the write needs."""

    rounds: dict[str, RuleRound]
    transitioned: set[SeriesKey] = field(default_factory=set)
    confirm: dict[str, str] = field(default_factory=dict)  # target -> the agent that began to see it alone
    evaluated: int = 0


def _oldest(*cursors: Mapping[str, datetime | None]) -> dict[str, datetime | None]:
    """Per target, where reading resumes for every reader of it (None: from the bootstrap floor)."""
    out: dict[str, datetime | None] = {}
    for each in cursors:
        for target, at in each.items():
            if target not in out or (out[target] is not None and (at is None or at < out[target])):
                out[target] = at
    return out


def _late(targets, settle_s: float) -> Late:
    """What each round reads back before the cursors (WRITE_MARGIN_S): per target the part of its timeout
    `settle_s` does not cover; only probes that took at least `settle_s` less the margin can be late."""
    back_s = {t.id: max(0.0, t.timeout_s + WRITE_MARGIN_S - settle_s) for t in targets}
    return Late(back_s, slow_ms=max(0.0, settle_s - WRITE_MARGIN_S) * 1000.0)


class StaleEngineError(RuntimeError):
    """Another engine evaluated since this one read the database: its memory is out of date."""


class AlertEngine:
    def __init__(self, options: EngineOptions | None = None, clock: Callable[[], datetime] | None = None) -> None:
        self.options = options or EngineOptions()
        self.clock = clock or (lambda: datetime.now(UTC))
        self._series: dict[SeriesKey, Series] = {}
        self._loaded: set[tuple[str, str]] = set()  # (rule, target) pairs whose checkpoints are loaded
        self._token: str | None = None
        self._burns = SloBurns()
        self._read_to: dict[tuple[str, str], datetime] = {}  # (target, agent) -> the newest probe read

    def _forget(self) -> None:
        self._series.clear()
        self._read_to.clear()
        self._loaded.clear()
        self._burns.clear()

    def evaluate(self, engine: Engine, config, now: datetime | None = None) -> RoundStats:
        try:
            stats = self._evaluate(engine, config, now or self.clock())
        except Exception:
            self._forget()  # the database is the truth: reload and replay next round
            self._token = None
            raise
        # A live alert's row changes every round (its current value): only transitions are news.
        log.log(
            logging.INFO if stats.transitions or stats.queued else logging.DEBUG,
            "alerts: %d samples, %d alert transitions, %d notifications queued (%.2fs)",
            stats.samples,
            stats.transitions,
            stats.queued,
            stats.elapsed_s,
        )
        return stats

    def _evaluate(self, engine: Engine, config, now: datetime) -> RoundStats:
        started = time.monotonic()
        opts = self.options
        rules = _valid_rules(config.alerts)
        members = {
            name: {
                t.id: Scope.of_target(t)
                for t in config.targets
                if rule.matches(t.provider, t.model, t.region, t.prompt)
            }
            for name, (rule, _settings) in rules.items()
        }
        unhealthy = unhealthy_agents(engine)
        until = now - timedelta(seconds=opts.settle_s)
        self._burns.sync(config.slos, config.targets)
        # read
        with engine.connect() as conn:
            token = checkpoints.read_token(conn)
            if token != self._token:
                self._forget()
                self._burns.sync(config.slos, config.targets)
            self._sync(conn, rules, members)
            windows = windows_through(conn, config.maintenance, self._burns.reach(now), now)  # DESIGN §16
            self._burns.exclude(windows)  # probes in our windows are left out of SLO budgets
            fresh_slos = self._burns.rebuild(conn, now, until, unhealthy)
            cursors = _oldest(self._cursors(members), self._burns.cursors())
            floor = now - timedelta(seconds=opts.bootstrap_s)
            points = fetch_new(conn, cursors, floor=floor, until=until, late=_late(config.targets, opts.settle_s))
            live = load_live(conn)
            released = group_resolutions(conn, now - timedelta(seconds=RELEASE_LOOKBACK_S))
            silences = active_silences(conn, config.silences, now)
        # detect
        intervals = {t.id: t.interval_s for t in config.targets}
        detected = self._detect(rules, members, points, live, intervals, unhealthy, now)
        slo_verdicts, judged = self._burns.step(points, unhealthy, fresh_slos)
        slo_verdicts = self._with_budgets(engine, config, slo_verdicts, now)
        # round
        sources = {
            name: RuleSource(RuleView.of(rule), rule.kind, members[name], detected.rounds[name])
            for name, (rule, _settings) in rules.items()
        }
        changes = run_round(
            RoundInput(
                now=now,
                rules=sources,
                slos=slo_verdicts,
                live=live,
                released=released,
                intervals_s=intervals,
                mutes=[*(w for w in windows if w.active(now)), *silences],  # maintenance first
                inhibit=config.inhibit,
                policy=opts.group,
            )
        )
        # enrich, then write
        saving = self._due_checkpoints(detected.transitioned)
        routes_instead = alternatives(engine, changes, now)  # read before the write transaction
        links = alert_links(engine, config) if any(c.events for c in changes) else None  # DESIGN §18
        with engine.begin() as conn:
            if checkpoints.read_token(conn, lock=True) != token:
                raise StaleEngineError("another engine evaluated alerts meanwhile; reloading")
            queued = apply_changes(
                conn,
                changes,
                config.notifiers,
                dashboard_url=config.dashboard_url,
                now=now,
                secrets=config.secrets,
                alternatives=routes_instead,
                runbooks=runbooks_of(config),
                links=links,
            )
            draft_incidents(conn, changes, config, now)  # DESIGN §16: incidents from the pages written
            saved = [checkpoint_of(key, self._series[key]) for key in saving]
            checkpoints.save(conn, saved, now)
            asked = confirmations.request(conn, detected.confirm, intervals, now)
            new_token = checkpoints.write_token(conn, now)
        self._token = new_token
        mono = time.monotonic()
        for key in saving:
            self._series[key].saved_at, self._series[key].dirty = mono, False
        total = self._count_new(points)
        transitions = sum(1 for c in changes if c.delete or c.record.id is None or not c.record.live or c.events)
        elapsed_s = time.monotonic() - started
        return RoundStats(
            total, detected.evaluated, len(changes), transitions, queued, len(saved), elapsed_s, asked, judged,
            tuple(changes),
        )  # fmt: skip

    def _count_new(self, points: Mapping[str, Any]) -> int:
        """Probes read for the first time (slow ones are read again before the cursors: see WRITE_MARGIN_S)."""
        new = 0
        for target, read in points.items():
            for p in read:
                key = (target, p.agent)
                last = self._read_to.get(key)
                if last is None or p.started_at > last:  # one (target, agent) probes one at a time
                    self._read_to[key] = p.started_at
                    new += 1
        return new

    def _detect(self, rules, members, points, live, intervals, unhealthy, now: datetime) -> _Detected:
        """Each (rule, target)'s new samples into its agents' detectors, the quorum folded in."""
        opts = self.options
        rounds: dict[str, RuleRound] = {name: RuleRound() for name in rules}
        for (name, target, agent), series in self._series.items():
            rounds[name].series.setdefault(target, {})[agent] = series
        live_firing = {(r.rule, r.scope.key) for r in live if r.state == FIRING and r.scope.kind == TARGET}
        detected = _Detected(rounds)
        for name, target, scope in ((n, t, sc) for n, ts in members.items() for t, sc in ts.items()):
            new_points = points.get(target, ())
            if not new_points:
                continue  # nothing new: its alerts keep what the last round that saw samples said
            rule, settings = rules[name]
            agents = rounds[name].series.setdefault(target, {})
            window_s = max(settings.window_s, PROBING_INTERVALS * intervals.get(target, 0.0)) + opts.settle_s
            fed = feed_pair(
                agents,
                new_points,
                settings,
                confirm=rule.confirm,
                target_firing=(name, target) in live_firing,
                probing_since=now - timedelta(seconds=window_s),
                unhealthy=unhealthy,
            )
            for agent in fed.new_agents:
                self._series[(name, target, agent)] = agents[agent]
            detected.transitioned.update((name, target, agent) for agent in fed.transitioned)
            detected.evaluated += fed.evaluated
            if fed.ask_from is not None:
                detected.confirm.setdefault(target, fed.ask_from)
            rounds[name].add(target, scope, fed)
        return detected

    def _with_budgets(
        self, engine: Engine, config, verdicts: dict[tuple[str, str], SloVerdicts], now: datetime
    ) -> dict[tuple[str, str], SloVerdicts]:
        """Each firing SLO scope's budget left over its period, from the rollups (at most once a minute)."""
        from monitor.storage.queries.slo_report import slo_report

        for key in self._burns.budgets_due(verdicts, now):
            v = verdicts[key]
            report = slo_report(engine, v.slo, config.targets, now, {key[1]}, self._burns.maintenance)
            self._burns.remember_budget(key, now, report.scopes[0].budget.remaining if report.scopes else None)
        return {k: replace(v, budget_remaining=self._burns.budget(k)) for k, v in verdicts.items()}

    def _sync(
        self, conn, rules: Mapping[str, tuple[Any, DetectorSettings]], members: Mapping[str, Mapping[str, Scope]]
    ) -> None:
        """Drop detectors no rule needs, load the checkpoints of new (rule, target) pairs, follow rule edits.

        A pair's agents are not configured: each one's series is created when its first sample comes
        (or loaded from its checkpoint), so an agent that joins needs no restart and warms up on its own."""
        wanted = {(name, target) for name, targets in members.items() for target in targets}
        for key in [k for k in self._series if (k[0], k[1]) not in wanted]:
            del self._series[key]
        self._loaded &= wanted
        missing = wanted - self._loaded
        stored = checkpoints.load_pairs(conn, missing) if missing else {}
        mono = time.monotonic()
        for (name, target, agent), cp in stored.items():
            settings = rules[name][1]
            det = SeriesDetector.from_state(settings, cp.state)
            paths = PathHistory(cp.state.get("paths") or ()) if isinstance(cp.state, dict) else PathHistory()
            self._series[(name, target, agent)] = Series(det, settings, cp.last_ts, saved_at=mono, paths=paths)
        self._loaded |= missing
        for (name, _target, _agent), series in self._series.items():
            settings = rules[name][1]
            if series.settings != settings:  # the rule was edited: keep what still applies
                series.detector = SeriesDetector.from_state(settings, series.detector.to_state())
                series.settings, series.dirty = settings, True

    def _cursors(self, members: Mapping[str, Mapping[str, Scope]]) -> dict[str, datetime | None]:
        """Per target, where reading resumes: the oldest cursor of its live series (None: a pair with no
        series yet warms up from history). A series far behind the target's newest (an agent that left)
        does not hold the others back: it would re-read hours of samples every round."""
        newest: dict[str, list[datetime]] = {}
        has_series: set[tuple[str, str]] = set()
        for (name, target, _agent), series in self._series.items():
            has_series.add((name, target))
            if series.cursor is not None:
                newest.setdefault(target, []).append(series.cursor)
        out: dict[str, datetime | None] = {}
        for name, targets in members.items():
            for target in targets:
                seen = newest.get(target)
                if (name, target) not in has_series or not seen:
                    out[target] = None
                    continue
                if target in out and out[target] is None:
                    continue
                top = max(seen)
                oldest = min(c for c in seen if c >= top - DEPARTED_BEHIND)
                out[target] = oldest if target not in out else min(out[target], oldest)
        return out

    def _due_checkpoints(self, transitioned: set[SeriesKey]) -> list[SeriesKey]:
        mono = time.monotonic()
        every = self.options.checkpoint_every_s
        due = sorted(transitioned)
        stale = [
            k
            for k, s in self._series.items()
            if k not in transitioned and s.dirty and (s.saved_at is None or mono - s.saved_at >= every)
        ]
        stale.sort(key=lambda k: self._series[k].saved_at or 0.0)  # never-saved and oldest first
        return due + stale[: max(0, self.options.max_checkpoints_per_round - len(due))]


def _valid_rules(rules) -> dict[str, tuple[Any, DetectorSettings]]:
    out = {}
    for rule in rules:
        try:
            out[rule.name] = (rule, settings_from_rule(rule))
        except ValueError as exc:  # the config loader should have refused it; skip rather than stop all alerting
            log.error("alert rule %s cannot be evaluated: %s", rule.name, exc)
    return out


def options_for(alerting: Alerting) -> EngineOptions:
    """The engine as the config's `alerting:` block sets it (the live leader and the backtest alike)."""
    return EngineOptions(settle_s=alerting.settle_s, group=GroupPolicy(group_wait_s=alerting.group_wait_s))


def alert_jobs_for(alerting: Alerting) -> dict[str, tuple[float, Callable[[Engine, Any], object]]]:
    """`alert_jobs` with the timings of the config's `alerting:` block."""
    return alert_jobs(
        evaluate_every_s=alerting.evaluate_every_s,
        deliver_every_s=alerting.deliver_every_s,
        options=options_for(alerting),
        retry=RetryPolicy(
            base_s=alerting.retry_after_s, cap_s=alerting.retry_max_s, max_age_s=alerting.give_up_after_s
        ),
    )


def alert_jobs(
    *,
    evaluate_every_s: float = 30.0,
    deliver_every_s: float = 5.0,
    options: EngineOptions | None = None,
    retry: RetryPolicy | None = None,
) -> dict[str, tuple[float, Callable[[Engine, Any], object]]]:
    """The leader's alerting jobs for `ServiceOptions.leader_jobs`: evaluate, then deliver the outbox.

    Delivery runs on the leader only (one sender, no thundering herd against
    a receiver); its claims are still compare-and-set, so a second sender
    during a leadership hand-over cannot send a row twice.
    """
    alert_engine = AlertEngine(options)
    delivery = OutboxDelivery(policy=retry, budget_s=max(5.0, 4 * deliver_every_s))
    return {
        "alerts.evaluate": (evaluate_every_s, alert_engine.evaluate),
        "alerts.deliver": (deliver_every_s, delivery.run),
    }
