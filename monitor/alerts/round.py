"""One alert round (DESIGN §15), pure: what the detectors and SLO burns said → alert row changes.

    changes = run_round(RoundInput(...))

The engine reads and detects (engine.py: new samples into each (rule, target, agent) detector and
each SLO scope's burn, the quorum folded in as it goes), then hands this module the round's
verdicts, the live alerts, silences and `now`. The stages run in this order, each a function of the
round's input and the state the stages before it left, with one job:

    own_path  a lone agent's latency alarm that is its own network path → its vantage alert (own_path.py)
    fold      each rule's evaluations → target and vantage alerts (fold.py)
    vantage   one agent's path degrading towards several providers → one alert about the agent (agent_wide.py)
    group     most targets of a provider-region firing → one provider-region alert (grouping.py)
    slo       each SLO scope's burn verdicts → its alert (slo_fold.py)
    inhibit   alerts another firing alert makes redundant are marked `inhibited_by` (inhibition.py)
    mute      silences and maintenance mark alerts `muted` (muting.py)
    hold      which alerts notify now: holds, repeats, resolutions → row changes (holding.py)
    render    every changed alert's summary, built once from its fields (render.py)

The engine then enriches the notifying changes (the alternative route, the provider's own incident)
and writes them with their outbox rows in one transaction (store.py). `firsttoken backtest --samples`
runs this same round over a scratch database (replay.py). A new stage goes into `STAGES`
where its input is ready: after the stage that makes what it reads, before the first that must see
its result (anything that stops a notification goes before `hold`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from monitor.alerts.agent_wide import step_agents
from monitor.alerts.attribution import LATENCY_RULE_METRICS
from monitor.alerts.fold import close, fold_rule
from monitor.alerts.grouping import GroupPolicy, step_groups
from monitor.alerts.holding import Hold, closed_change, notify
from monitor.alerts.inhibition import AlertKey, inhibit
from monitor.alerts.muting import mute
from monitor.alerts.own_path import own_path_holds
from monitor.alerts.records import RESOLVED, AlertRecord, Change, RuleView
from monitor.alerts.render import render
from monitor.alerts.scope import PROVIDER_REGION, TARGET, VANTAGE, Scope
from monitor.alerts.series import RuleRound
from monitor.alerts.slo_fold import SloVerdicts, closed_slos, fold_slo, rule_of
from monitor.slo.windows import SEVERITY_RANK


@dataclass(frozen=True, slots=True)
class RuleSource:
    """One alert rule's part of the round: what it applies to and what its detectors said."""

    view: RuleView
    kind: str  # regression | threshold | change
    members: Mapping[str, Scope]  # target id -> scope, every configured target the rule applies to
    detections: RuleRound


@dataclass(frozen=True, slots=True)
class RoundInput:
    now: datetime
    rules: Mapping[str, RuleSource]
    slos: Mapping[tuple[str, str], SloVerdicts]  # (slo name, scope key) -> its burn's verdicts
    live: Sequence[AlertRecord]  # every pending or firing alert, rules' and SLOs'
    released: Mapping[tuple[str, str], datetime] = field(default_factory=dict)  # (rule, group) -> resolved at
    intervals_s: Mapping[str, float] = field(default_factory=dict)  # target id -> probe interval
    mutes: Sequence[Any] = ()  # active silences and maintenance windows: `mutes(scope)`, `kind`
    inhibit: Sequence[Any] = ()  # the config's `inhibit:` rules
    policy: GroupPolicy = field(default_factory=GroupPolicy)


@dataclass(frozen=True, slots=True)
class RoundState:
    rules: Mapping[str, RuleSource]
    live: Mapping[AlertKey, AlertRecord] = field(default_factory=dict)  # after the stages so far
    closed: tuple[AlertRecord, ...] = ()  # resolved this round (or pending that closed)
    changes: tuple[Change, ...] = ()


Stage = Callable[[RoundInput, RoundState], RoundState]


def previous(inp: RoundInput) -> dict[AlertKey, AlertRecord]:
    return {(r.rule, r.scope.key): r for r in inp.live}


def own_path_stage(inp: RoundInput, state: RoundState) -> RoundState:
    """A lone agent's latency regressions that are its own network path become its vantage alerts,
    judged across every target of the rule that agent probes, not only this round's."""
    rules = dict(state.rules)
    for name, source in state.rules.items():
        rr = source.detections
        if not rr.lone or source.kind != "regression" or source.view.metric not in LATENCY_RULE_METRICS:
            continue
        rule_live = {r.scope.key: r for r in inp.live if r.rule == name}
        held = own_path_holds(rr.lone, source.members, rule_live, rr.attribute)
        if held:
            rr = rr.copy()
            for target, providers in held.items():
                rr.hold_as_vantage(target, source.members[target], providers)
            rules[name] = replace(source, detections=rr)
    return replace(state, rules=rules)


def fold_stage(inp: RoundInput, state: RoundState) -> RoundState:
    live: dict[AlertKey, AlertRecord] = {}
    closed: list[AlertRecord] = list(state.closed)
    by_rule = _live_by_rule(inp)
    for name, source in state.rules.items():
        folded = fold_rule(source.view, source.members, source.detections, by_rule.get(name, {}), inp.now)
        live.update({(name, key): r for key, r in folded.live.items()})
        closed += folded.closed
    for name, records in by_rule.items():  # rules no longer configured: resolve what they left open
        if name not in state.rules and not name.startswith("slo:"):
            view = RuleView(name)
            closed += [close(r, inp.now, None, "no longer evaluated", view) for r in records.values()]
    return replace(state, live=live, closed=tuple(closed))


def vantage_stage(inp: RoundInput, state: RoundState) -> RoundState:
    return _per_rule(inp, state, lambda source, before, now_live: step_agents(source.view, before, now_live, inp.now))


def group_stage(inp: RoundInput, state: RoundState) -> RoundState:
    def step(source: RuleSource, before, now_live):
        closed, live = step_groups(source.view, before, now_live, source.members, inp.now, inp.policy)
        return live, closed

    return _per_rule(inp, state, step)


def _per_rule(inp: RoundInput, state: RoundState, step: Callable) -> RoundState:
    """`step(source, the rule's live alerts as read, its live alerts so far)` -> (alerts it adds or
    updates by scope key, alerts it closed), for each rule."""
    live, closed = dict(state.live), list(state.closed)
    by_rule = _live_by_rule(inp)
    for name, source in state.rules.items():
        so_far = {k: r for (rule, k), r in state.live.items() if rule == name}
        added, done = step(source, by_rule.get(name, {}), so_far)
        live.update({(name, key): r for key, r in added.items()})
        closed += done
    return replace(state, live=live, closed=tuple(closed))


def slo_stage(inp: RoundInput, state: RoundState) -> RoundState:
    live, closed = dict(state.live), list(state.closed)
    before = previous(inp)
    judged = set()
    for (name, key), verdicts in inp.slos.items():
        alert_key = (rule_of(name), key)
        judged.add(alert_key)
        done, current = fold_slo(verdicts, before.get(alert_key), inp.now)
        closed += done
        if current is not None:
            live[alert_key] = current
    gone = [r for k, r in before.items() if r.slo is not None and k not in judged]
    closed += closed_slos(gone, inp.now)  # SLOs or scopes no longer configured
    return replace(state, live=live, closed=tuple(closed))


def inhibit_stage(inp: RoundInput, state: RoundState) -> RoundState:
    kinds = {name: source.kind for name, source in state.rules.items()}
    metrics = {v.slo.name: _slo_metrics(v.slo) for v in inp.slos.values()}

    def labels(record: AlertRecord) -> dict[str, Any]:
        if record.slo is not None:
            metric: Any = metrics.get(record.slo, ("error_rate",))
            return {
                "rule": record.rule,
                "slo": record.slo,
                "metric": metric,
                "kind": "slo",
                "severity": record.severity,
            }
        kind = kinds.get(record.rule)
        return {"rule": record.rule, "slo": None, "metric": record.metric, "kind": kind, "severity": record.severity}

    rule_of_id = {r.id: r.rule for r in (*state.live.values(), *state.closed) if r.id is not None}
    return replace(state, live=inhibit(state.live, inp.inhibit, labels, rule_of_id))


def mute_stage(inp: RoundInput, state: RoundState) -> RoundState:
    return replace(state, live=mute(state.live, inp.mutes))


def hold_stage(inp: RoundInput, state: RoundState) -> RoundState:
    before = previous(inp)
    group_size: dict[tuple[str, str], int] = {}
    for name, source in state.rules.items():
        for scope in source.members.values():
            group_size[(name, scope.group_key)] = group_size.get((name, scope.group_key), 0) + 1
    released = dict(inp.released)
    released.update(
        {
            (r.rule, r.scope.key): inp.now
            for r in state.closed
            if r.scope.kind == PROVIDER_REGION and r.state == RESOLVED
        }
    )
    repeat_s = {name: source.view.repeat_interval_s for name, source in state.rules.items()}
    repeat_s.update({rule_of(v.slo.name): v.slo.repeat_interval_s for v in inp.slos.values()})
    slo_targets = {(rule_of(name), key): v.targets for (name, key), v in inp.slos.items()}
    policy = inp.policy

    def wait_s(intervals: Sequence[float]) -> float:
        return max(policy.group_wait_s, policy.group_wait_intervals * max(intervals, default=0.0))

    changes = [closed_change(r, inp.now) for r in state.closed]  # first: a scope's new alert may follow
    for key, record in state.live.items():
        kind = record.scope.kind
        hold_s = 0.0
        if record.slo is not None:
            hold_s = wait_s([inp.intervals_s.get(t, 0.0) for t in slo_targets.get(key, ())])
        elif (kind == TARGET and group_size.get((key[0], record.scope.group_key), 0) >= 2) or kind == VANTAGE:
            # A vantage alert always waits: the agent's other targets may fold it into one about the agent.
            hold_s = wait_s([inp.intervals_s.get(record.scope.target_key, 0.0)])
        old = before.get(key)
        escalated = (
            old is not None
            and old.last_notified_at is not None
            and SEVERITY_RANK.get(record.severity, 0) > SEVERITY_RANK.get(old.severity, 0)
        )
        hold = Hold(
            hold_s=hold_s,
            repeat_interval_s=repeat_s.get(key[0], 4 * 3600.0),
            released_at=released.get((key[0], record.scope.group_key)) if kind == TARGET else None,
            escalated=escalated,
        )
        updated, events = notify(record, hold, inp.now)
        if events or updated != old:
            changes.append(Change(updated, events))
    return replace(state, changes=tuple(changes))


def render_stage(inp: RoundInput, state: RoundState) -> RoundState:
    """Each changed alert the round judged gets its summary; one it did not judge keeps the one it has."""
    return replace(
        state,
        changes=tuple(
            c if c.delete or c.record.facts is None else replace(c, record=replace(c.record, summary=render(c.record)))
            for c in state.changes
        ),
    )


STAGES: tuple[Stage, ...] = (
    own_path_stage,
    fold_stage,
    vantage_stage,
    group_stage,
    slo_stage,
    inhibit_stage,
    mute_stage,
    hold_stage,
    render_stage,
)


def run_round(inp: RoundInput, stages: Sequence[Stage] = STAGES) -> list[Change]:
    state = RoundState(rules=inp.rules)
    for stage in stages:
        state = stage(inp, state)
    return list(state.changes)


def _live_by_rule(inp: RoundInput) -> dict[str, dict[str, AlertRecord]]:
    out: dict[str, dict[str, AlertRecord]] = {}
    for record in inp.live:
        out.setdefault(record.rule, {})[record.scope.key] = record
    return out


def _slo_metrics(slo: Any) -> tuple[str, ...]:
    """What an SLO alert is about, for `inhibit:` matchers: the metrics its `good:` bounds; an SLO with
    no bound counts failed probes only, so it is an error-rate alert."""
    bounded = tuple(metric for metric, _below, _above in slo.good.bounds())
    return bounded or ("error_rate",)
