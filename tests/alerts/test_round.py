"""The pure alert round (monitor.alerts.round) for one rule: evaluations + live alerts + now in, changes out."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from monitor.alerts.detectors.base import FIRING, OK, PENDING, Evaluation
from monitor.alerts.grouping import GroupPolicy
from monitor.alerts.records import AlertRecord, Change, RuleView
from monitor.alerts.round import RoundInput, RuleSource, run_round
from monitor.alerts.scope import Scope
from monitor.alerts.series import RuleRound

T0 = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
RULE = RuleView("ttft-regression", "page", "ttft_ms", repeat_interval_s=4 * 3600)
NO_HOLD = GroupPolicy(group_wait_s=0.0, group_wait_intervals=0.0)


def scope(model: str = "m1", provider: str = "p", region: str = "r1", prompt: str = "short") -> Scope:
    return Scope(provider=provider, region=region, model=model, prompt=prompt)


def ev(t_s: float, state: str, *, condition: bool = True, value=200.0, baseline=100.0, **flags) -> Evaluation:
    return Evaluation(
        (T0 + timedelta(seconds=t_s)).timestamp(), state, condition, value=value, baseline=baseline, **flags
    )


def never_muted(_scope: Scope) -> bool:
    return False


class Mute:
    """A silence as the mute stage sees it, from a predicate."""

    kind = "silence"

    def __init__(self, predicate) -> None:
        self.mutes = predicate


class World:
    """Applies changes like the database would, so tests can run many rounds."""

    def __init__(self, scopes: list[Scope], policy: GroupPolicy = NO_HOLD, rule: RuleView = RULE) -> None:
        self.members = {s.key: s for s in scopes}
        self.rows: dict[int, AlertRecord] = {}
        self.sent: list[tuple[str, str, int]] = []  # (event, scope key, alert id)
        self.policy = policy
        self.rule = rule
        self.next_id = 1

    @property
    def live(self) -> dict[str, AlertRecord]:
        return {r.scope.key: r for r in self.rows.values() if r.live}

    def round(self, at_s: float, evaluations=None, muted=never_muted, intervals=None) -> list[Change]:
        now = T0 + timedelta(seconds=at_s)
        released = {
            (r.rule, r.scope.key): r.resolved_at
            for r in self.rows.values()
            if r.scope.kind == "provider_region" and r.resolved_at
        }
        source = RuleSource(self.rule, "regression", self.members, RuleRound(evaluations=dict(evaluations or {})))
        inp = RoundInput(
            now,
            {self.rule.name: source},
            {},
            list(self.live.values()),
            released=released,
            intervals_s=intervals or {},
            mutes=[Mute(muted)],
            policy=self.policy,
        )
        changes = run_round(inp)
        for change in changes:
            record = change.record
            if change.delete:
                del self.rows[record.id]
                continue
            if record.id is None:
                record = replace(record, id=self.next_id)
                self.next_id += 1
            self.rows[record.id] = record
            self.sent += [(e, record.scope.key, record.id) for e in change.events]
        return changes


def test_pending_then_firing_then_resolved_notifies_once_each():
    s = scope()
    w = World([s])
    w.round(10, {s.key: [ev(1, PENDING)]})
    (pending,) = w.live.values()
    assert pending.state == "pending" and w.sent == []
    w.round(20, {s.key: [ev(11, FIRING, alarm_started=True)]})
    (firing,) = w.live.values()
    assert firing.state == "firing" and firing.fired_at == T0 + timedelta(seconds=11)
    assert firing.started_at == T0 + timedelta(seconds=1)
    assert (firing.value, firing.baseline) == (200.0, 100.0)
    assert w.sent == [("firing", s.key, firing.id)]
    w.round(30, {s.key: [ev(21, FIRING, condition=False, value=101.0)]})
    w.round(40, {s.key: [ev(31, FIRING, condition=False)]})
    assert len(w.sent) == 1  # nothing new while firing, before the repeat interval
    w.round(50, {s.key: [ev(41, OK, condition=False, value=99.0, resolved=True)]})
    assert w.live == {}
    assert w.sent == [("firing", s.key, 1), ("resolved", s.key, 1)]
    resolved = w.rows[1]
    assert resolved.state == "resolved" and resolved.resolved_at == T0 + timedelta(seconds=41)
    assert resolved.value == 99.0 and resolved.summary.startswith("resolved: ")


def test_a_pending_alert_that_clears_is_dropped_without_a_notification():
    s = scope()
    w = World([s])
    w.round(10, {s.key: [ev(1, PENDING)]})
    changes = w.round(20, {s.key: [ev(11, OK, condition=False)]})
    assert [c.delete for c in changes] == [True]
    assert w.rows == {} and w.sent == []


def test_one_round_with_many_evaluations_fires_and_resolves_in_order():
    s = scope()
    w = World([s])
    w.round(100, {s.key: [ev(1, PENDING), ev(2, FIRING, alarm_started=True), ev(3, OK, resolved=True), ev(4, PENDING)]})
    # Fired and resolved inside one round: nobody was paged, so no resolution either.
    assert w.sent == []
    states = sorted(r.state for r in w.rows.values())
    assert states == ["pending", "resolved"]


def test_no_flapping_condition_wobbling_while_firing_changes_nothing():
    s = scope()
    w = World([s])
    w.round(10, {s.key: [ev(1, FIRING, alarm_started=True)]})
    wobble = [ev(10 + i, FIRING, condition=i % 2 == 0) for i in range(20)]
    w.round(40, {s.key: wobble})
    assert [e for e, *_ in w.sent] == ["firing"] and len(w.rows) == 1


def test_repeat_interval_renotifies_while_firing():
    s = scope()
    rule = replace(RULE, repeat_interval_s=3600)
    w = World([s], rule=rule)
    w.round(10, {s.key: [ev(1, FIRING, alarm_started=True)]})
    w.round(3000)
    assert [e for e, *_ in w.sent] == ["firing"]
    w.round(3611)
    w.round(3620)
    assert [e for e, *_ in w.sent] == ["firing", "repeat"]
    w.round(3611 + 3600)
    assert [e for e, *_ in w.sent] == ["firing", "repeat", "repeat"]


def test_group_of_most_targets_opens_one_provider_alert_and_inhibits_the_targets():
    scopes = [scope(f"m{i}") for i in range(4)]
    w = World(scopes)
    firing = {s.key: [ev(1, FIRING, alarm_started=True, value=300.0 + i)] for i, s in enumerate(scopes[:3])}
    w.round(10, firing)
    assert [(e, k) for e, k, _ in w.sent] == [("firing", "p@r1")]
    group = w.live["p@r1"]
    assert group.scope.kind == "provider_region" and group.scope.model is None and group.scope.prompt is None
    assert group.value == 301.0 and group.baseline == 100.0
    assert "3 of 4 targets" in group.summary
    assert sum(1 for r in w.live.values() if r.scope.kind == "target" and r.state == "firing") == 3
    # Hours later: the group repeats, its members never page.
    w.round(4 * 3600 + 20)
    assert [(e, k) for e, k, _ in w.sent] == [("firing", "p@r1"), ("repeat", "p@r1")]
    # One clears: 2 of 4 still fire, exactly half — the group stays.
    w.round(4 * 3600 + 30, {scopes[0].key: [ev(30, OK, resolved=True)]})
    assert "p@r1" in w.live
    # Another clears: a majority has cleared, the group resolves; the remaining member was inhibited
    # until now, was never paged, and pages on its own from now on (it is still degraded).
    w.round(4 * 3600 + 40, {scopes[1].key: [ev(40, OK, resolved=True)]})
    assert "p@r1" not in w.live
    events = [(e, k) for e, k, _ in w.sent]
    assert events[2:] == [("resolved", "p@r1"), ("firing", scopes[2].key)]
    # Members resolving that were never paged resolve silently.
    assert ("resolved", scopes[0].key) not in events


def test_half_of_the_targets_is_not_most_and_one_target_is_never_a_group():
    scopes = [scope(f"m{i}") for i in range(4)]
    w = World(scopes)
    w.round(10, {s.key: [ev(1, FIRING, alarm_started=True)] for s in scopes[:2]})
    assert sorted(k for _, k, _ in w.sent) == sorted(s.key for s in scopes[:2])
    solo = scope("only", provider="q")
    w2 = World([solo])
    w2.round(10, {solo.key: [ev(1, FIRING, alarm_started=True)]})
    assert [k for _, k, _ in w2.sent] == [solo.key]


def test_hold_lets_targets_that_fire_a_sample_apart_group():
    scopes = [scope(f"m{i}") for i in range(3)]
    policy = GroupPolicy(group_wait_s=30.0, group_wait_intervals=2.0)
    w = World(scopes, policy=policy)
    intervals = {s.key: 10.0 for s in scopes}
    w.round(5, {scopes[0].key: [ev(1, FIRING, alarm_started=True)]}, intervals=intervals)
    assert w.sent == []  # held: its provider-region has other targets
    w.round(20, {scopes[1].key: [ev(15, FIRING, alarm_started=True)]}, intervals=intervals)
    assert [k for _, k, _ in w.sent] == ["p@r1"]
    w.round(100, intervals=intervals)
    assert [k for _, k, _ in w.sent] == ["p@r1"]  # members stay inhibited


def test_stragglers_of_a_resolved_group_wait_a_hold_before_paging_alone():
    scopes = [scope(f"m{i}") for i in range(3)]
    w = World(scopes, policy=GroupPolicy(group_wait_s=30.0, group_wait_intervals=0.0))
    w.round(5, {s.key: [ev(1, FIRING, alarm_started=True)] for s in scopes})
    w.round(40)
    assert [k for _, k, _ in w.sent] == ["p@r1"]
    # Two recover; the group resolves; the third clears ten seconds later: it never pages.
    w.round(100, {s.key: [ev(95, OK, resolved=True)] for s in scopes[:2]})
    w.round(110, {scopes[2].key: [ev(105, OK, resolved=True)]})
    assert [(e, k) for e, k, _ in w.sent] == [("firing", "p@r1"), ("resolved", "p@r1")]
    # Had it stayed degraded a whole hold after the group resolved, it would have paged then.
    w2 = World(scopes, policy=GroupPolicy(group_wait_s=30.0, group_wait_intervals=0.0))
    w2.round(5, {s.key: [ev(1, FIRING, alarm_started=True)] for s in scopes})
    w2.round(40)
    w2.round(100, {s.key: [ev(95, OK, resolved=True)] for s in scopes[:2]})
    w2.round(129)
    assert len(w2.sent) == 2
    w2.round(131)
    assert w2.sent[2][:2] == ("firing", scopes[2].key)


def test_hold_expires_and_a_lone_degraded_target_pages():
    scopes = [scope(f"m{i}") for i in range(3)]
    w = World(scopes, policy=GroupPolicy(group_wait_s=30.0, group_wait_intervals=0.0))
    w.round(5, {scopes[0].key: [ev(1, FIRING, alarm_started=True)]})
    w.round(30)
    assert w.sent == []
    w.round(31)
    assert [(e, k) for e, k, _ in w.sent] == [("firing", scopes[0].key)]


def test_silence_mutes_notifications_not_state_and_pages_when_it_ends_if_still_firing():
    s = scope(region="eu-west-1", provider="bedrock")
    w = World([s])

    def muted(sc: Scope) -> bool:
        return sc.provider == "bedrock" and sc.region == "eu-west-1"

    w.round(10, {s.key: [ev(1, FIRING, alarm_started=True)]}, muted=muted)
    (alert,) = w.live.values()
    assert alert.state == "firing" and alert.silenced and w.sent == []
    w.round(20, muted=muted)
    assert w.sent == []
    w.round(30)  # silence over, still firing
    assert [e for e, *_ in w.sent] == ["firing"]
    assert not w.live[s.key].silenced


def test_silenced_then_resolved_sends_nothing_at_all():
    s = scope()
    w = World([s])
    w.round(10, {s.key: [ev(1, FIRING, alarm_started=True)]}, muted=lambda sc: True)
    w.round(20, {s.key: [ev(11, OK, resolved=True)]}, muted=lambda sc: True)
    assert w.sent == [] and w.rows[1].state == "resolved"


def test_resolution_of_a_paged_alert_is_sent_even_under_a_later_silence():
    s = scope()
    w = World([s])
    w.round(10, {s.key: [ev(1, FIRING, alarm_started=True)]})
    w.round(20, {s.key: [ev(11, OK, resolved=True)]}, muted=lambda sc: True)
    assert [e for e, *_ in w.sent] == ["firing", "resolved"]  # close the incident that was opened


def test_target_removed_from_the_config_resolves_its_alert():
    s, other = scope("m1"), scope("m2", provider="q")
    w = World([s, other])
    w.round(10, {s.key: [ev(1, FIRING, alarm_started=True)]})
    w.members = {other.key: other}
    w.round(20)
    assert w.rows[1].state == "resolved" and "no longer evaluated" in w.rows[1].summary
    assert [e for e, *_ in w.sent] == ["firing", "resolved"]


def test_detector_and_record_disagreeing_converge_on_the_detector():
    s = scope()
    w = World([s])
    # A detector already firing (say, restored) with no alert row: the alert opens as firing.
    w.round(10, {s.key: [ev(1, FIRING)]})
    assert w.live[s.key].state == "firing"
    # A detector that was reset to ok resolves the open alert.
    w.round(20, {s.key: [ev(11, OK, condition=False)]})
    assert w.live == {} and [e for e, *_ in w.sent] == ["firing", "resolved"]


def test_unchanged_round_writes_nothing():
    s = scope()
    w = World([s])
    w.round(10, {s.key: [ev(1, FIRING, alarm_started=True)]})
    assert w.round(20) == []


def test_summaries_name_a_threshold_rules_bound_a_threshold_not_a_baseline():
    threshold = RuleView("ttft-p90", "ticket", "ttft_ms", reference="threshold")
    scopes = [scope(f"m{i}") for i in range(3)]
    w = World(scopes, rule=threshold)
    w.round(10, {s.key: [ev(1, FIRING, alarm_started=True, value=2500.0, baseline=2000.0)] for s in scopes[:1]})
    (alone,) = w.live.values()
    assert alone.summary == "ttft-p90: ttft_ms of p/m0@r1:short is 2,500 ms, threshold 2,000 ms (+25%)"
    w.round(20, {s.key: [ev(11, FIRING, alarm_started=True, value=2500.0, baseline=2000.0)] for s in scopes[1:]})
    group = w.live["p@r1"]
    assert group.summary.endswith("ttft_ms median 2,500 ms, threshold 2,000 ms (+25%)"), group.summary
    # A regression rule's reference is the series' own baseline.
    assert (
        "baseline 100 ms"
        in World([scopes[0]]).round(10, {scopes[0].key: [ev(1, FIRING, alarm_started=True)]})[0].record.summary
    )


def test_rule_view_of_a_configured_rule_knows_what_its_reference_is():
    from monitor.config import AlertRule

    assert RuleView.of(AlertRule("t", "ttft_ms", "threshold", percentile=0.9, above=2000)).reference == "threshold"
    assert RuleView.of(AlertRule("r", "ttft_ms", "regression", min_change=0.5)).reference == "baseline"


def test_rule_view_knows_which_way_its_metric_gets_worse():
    from monitor.config import AlertRule

    assert RuleView.of(AlertRule("r", "ttft_ms", "regression", min_change=0.5)).higher_is_worse
    assert not RuleView.of(AlertRule("r", "tps", "regression", min_change=0.5)).higher_is_worse
    assert RuleView.of(AlertRule("t", "error_rate", "threshold", above=0.2)).higher_is_worse
    assert not RuleView.of(AlertRule("t", "ttft_ms", "threshold", percentile=50, below=10)).higher_is_worse


def _fire_and_resolve(rule: RuleView, values: list[float], resolved_at: float) -> AlertRecord:
    s = scope()
    w = World([s], rule=rule)
    w.round(5, {s.key: [ev(1, PENDING, value=values[0])]})
    evs = [ev(10 + i, FIRING, alarm_started=i == 0, value=v) for i, v in enumerate(values[1:])]
    w.round(30, {s.key: evs})
    (firing,) = w.live.values()
    assert firing.fired_value == values[1]  # the pending value is not the fired one
    w.round(40, {s.key: [ev(35, OK, condition=False, value=resolved_at, resolved=True)]})
    (resolved,) = w.rows.values()
    assert resolved.state == "resolved"
    return resolved


def test_an_alert_keeps_its_fired_value_its_worst_while_firing_and_the_value_it_resolved_at():
    latency = _fire_and_resolve(RULE, [150.0, 300.0, 900.0, 400.0], resolved_at=110.0)
    assert (latency.fired_value, latency.worst_value, latency.value) == (300.0, 900.0, 110.0)
    # Decode speed gets worse downwards: its worst is the minimum.
    tps = RuleView("tps-drop", "page", "tps", higher_is_worse=False)
    slow = _fire_and_resolve(tps, [60.0, 40.0, 12.0, 30.0], resolved_at=95.0)
    assert (slow.fired_value, slow.worst_value, slow.value) == (40.0, 12.0, 95.0)


def test_a_group_alert_keeps_the_worst_median_of_its_members():
    scopes = [scope(f"m{i}") for i in range(3)]
    w = World(scopes)
    w.round(10, {s.key: [ev(1, FIRING, alarm_started=True, value=300.0)] for s in scopes})
    w.round(20, {s.key: [ev(11, FIRING, value=700.0)] for s in scopes})
    w.round(30, {s.key: [ev(21, FIRING, value=500.0)] for s in scopes})
    group = w.live["p@r1"]
    assert (group.fired_value, group.worst_value, group.value) == (300.0, 700.0, 500.0)
