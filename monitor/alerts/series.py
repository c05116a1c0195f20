"""One round of new samples into one (rule, target)'s per-agent detectors (DESIGN §11), for the engine.

Each vantage point has its own `Series` (detector, cursor, path history). `feed_pair`
feeds a target's new samples, in time order across agents, each to its agent's
detector, and folds every evaluation through the quorum (vantage.TargetFold);
`RuleRound` collects what the lifecycle needs of one rule for the round.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from monitor.alerts import checkpoints
from monitor.alerts.attribution import LATENCY_RULE_METRICS, PathHistory, processing_ms, split_sample
from monitor.alerts.detectors.base import Evaluation
from monitor.alerts.detectors.cache import watches
from monitor.alerts.detectors.detect import DetectorSettings, SeriesDetector
from monitor.alerts.own_path import LoneAlarm
from monitor.alerts.quorum import OK, Verdict
from monitor.alerts.scope import Scope
from monitor.alerts.vantage import TargetFold


@dataclass
class Series:
    detector: SeriesDetector
    settings: DetectorSettings
    cursor: datetime | None  # started_at of the newest sample seen
    saved_at: float | None = None  # monotonic time of the last checkpoint
    dirty: bool = False
    paths: PathHistory = field(default_factory=PathHistory)  # latency rules: "is it them or us"


Attribute = Callable[[str, str, float], dict[str, Any] | None]  # (target id, agent, since epoch s) -> split
SeriesKey = tuple[str, str, str]  # (rule, target id, agent): one series per vantage point (DESIGN §11)


@dataclass(frozen=True, slots=True)
class Fed:
    """What feeding one (rule, target) did this round."""

    fold: TargetFold
    verdict: Verdict
    probing: frozenset[str]
    evaluated: int
    transitioned: tuple[str, ...]  # agents whose detector changed state or fired/resolved
    new_agents: tuple[str, ...]  # agents seen on this target for the first time (series created)
    ask_from: str | None  # an agent that began to see the condition alone: ask the others to confirm


def feed_pair(
    agents: dict[str, Series],
    new_points: Sequence,
    settings: DetectorSettings,
    *,
    confirm,
    target_firing: bool,
    probing_since: datetime,
    unhealthy: Collection[str],
) -> Fed:
    """Feed one (rule, target)'s new samples (feed.Point, oldest first) to its agents' detectors;
    `agents` gains a series for each vantage point new to the target (it warms up on its own)."""
    probing = probing_agents(agents, new_points, probing_since, unhealthy)
    fold = TargetFold(probing, confirm, target_firing)
    before = {agent: series.detector.state for agent, series in agents.items()}
    for agent, state in before.items():
        fold.seed(agent, state)
    attributing = settings.metric in LATENCY_RULE_METRICS
    new_agents, fired, evaluated = [], set(), 0
    for point in new_points:
        series = agents.get(point.agent)
        if series is None:
            series = agents[point.agent] = Series(SeriesDetector(settings), settings, None)
            before[point.agent] = series.detector.state
            new_agents.append(point.agent)
        if series.cursor is not None and point.started_at <= series.cursor:
            continue
        series.cursor, series.dirty = point.started_at, True
        if point.agent in unhealthy:
            continue  # that vantage point reaches no provider: its failures are its own
        if not watches(settings, point.cache_state):
            continue  # the other half of a cache probe's cold/warm pair
        value = point.value(settings.metric)
        ev = series.detector.observe(point.started_at, value)
        if attributing and point.ok:
            series.paths.add(ev.timestamp, split_sample(value, point.ttfb_ms, processing_ms(point.server_timing)))
        fold.add(point.agent, ev)
        evaluated += 1
        if ev.alarm_started or ev.resolved:
            fired.add(point.agent)
    changed = {a for a, s in agents.items() if s.detector.state != before.get(a)}
    verdict = fold.final()
    ask_from = None
    if len(probing) >= 2 and verdict.state == OK:
        starting = [a for a in verdict.vantage if before.get(a, OK) == OK and a in probing]
        ask_from = starting[0] if starting else None
    return Fed(fold, verdict, probing, evaluated, tuple(sorted(fired | changed)), tuple(new_agents), ask_from)


@dataclass
class RuleRound:
    """One rule's inputs to the lifecycle from one round."""

    evaluations: dict[str, list[Evaluation]] = field(default_factory=dict)  # target id -> quorum evaluations
    evaluations_v: dict[str, list[Evaluation]] = field(default_factory=dict)  # vantage key -> its evaluations
    scopes: dict[str, Scope] = field(default_factory=dict)  # vantage key -> scope, per probing agent
    verdicts: dict[str, Verdict] = field(default_factory=dict)  # target id -> where the condition holds
    # target id -> agent -> series: every series of the rule, fed this round or not (attribution reads them)
    series: dict[str, dict[str, Series]] = field(default_factory=dict)
    lone: dict[str, LoneAlarm] = field(default_factory=dict)  # target id -> its one agent's alarm (own_path.py)

    def add(self, target: str, scope: Scope, fed: Fed) -> None:
        if fed.fold.target:
            self.evaluations[target] = fed.fold.target
        self.verdicts[target] = fed.verdict
        for agent in fed.probing:
            seen = scope.seen_from(agent)
            self.scopes[seen.key] = seen
            if fed.fold.vantage.get(agent):
                self.evaluations_v[seen.key] = fed.fold.vantage[agent]
        if fed.fold.single:
            first = next((ev.timestamp for ev in fed.fold.target if ev.state != OK), None)
            if first is not None:
                (agent,) = fed.fold.states
                since = self.series[target][agent].detector.change_started_s
                self.lone[target] = LoneAlarm(agent, first if since is None else since)

    def copy(self) -> RuleRound:
        """A copy whose evaluations and verdicts can be rewritten (the own-path stage) without touching
        this one; the series are shared (the stages only read them)."""
        return RuleRound(
            dict(self.evaluations), dict(self.evaluations_v), dict(self.scopes), dict(self.verdicts),
            self.series, dict(self.lone),
        )  # fmt: skip

    def hold_as_vantage(self, target: str, scope: Scope, providers: tuple[str, ...]) -> None:
        """A lone agent's alarm that is its own path (own_path.py): its evaluations become its vantage
        alert's, the target's are ok, and the verdict names the providers its path rose towards."""
        agent = self.lone[target].agent
        evaluations = self.evaluations.get(target, [])
        self.evaluations_v[scope.seen_from(agent).key] = evaluations
        self.evaluations[target] = [
            replace(ev, state=OK, condition=False, alarm_started=False, resolved=False) for ev in evaluations
        ]
        self.verdicts[target] = replace(self.verdicts[target], state=OK, vantage=(agent,), own_path=providers)

    def attribute(self, target: str, agent: str, since_s: float) -> dict[str, Any] | None:
        """One series' network/provider split since `since_s`; None for a series the rule does not have."""
        series = self.series.get(target, {}).get(agent)
        return None if series is None else series.paths.attribute(since_s)


def probing_agents(agents: Mapping[str, Series], new_points, since: datetime, unhealthy) -> frozenset[str]:
    """The agents that probed a target since `since` (its rule's window), healthy ones only."""
    seen = {a for a, s in agents.items() if s.cursor is not None and s.cursor >= since}
    seen |= {p.agent for p in new_points if p.started_at >= since}
    return frozenset(seen - set(unhealthy))


def checkpoint_of(key: SeriesKey, series: Series) -> checkpoints.Checkpoint:
    name, target, agent = key
    state = series.detector.to_state()
    if series.paths.points:
        state["paths"] = series.paths.to_state()
    return checkpoints.Checkpoint(name, checkpoints.series_name(target, agent), state, series.cursor)
