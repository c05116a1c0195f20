"""The inhibit stage (monitor.alerts.inhibition), pure: structural inhibition, `inhibit:` rules, stickiness,
and the `inhibit:` config section (monitor.config.inhibit)."""

from __future__ import annotations

import json

import pytest

from monitor.alerts.inhibition import inhibit
from monitor.alerts.records import UNSTORED
from monitor.alerts.scope import Scope
from monitor.config import ConfigError, load_config_text
from monitor.config.inhibit import DEFAULT_INHIBIT, AlertMatch, InhibitRule
from monitor.slo.scopes import SloScope

from .helpers import alert, config_spec, keyed, target_scope

KINDS = {"slow": "regression", "errors": "threshold", "other": "regression"}
ERRORS_OVER_LATENCY = InhibitRule(
    name="errors-over-latency",
    source=AlertMatch(metric=("error_rate",)),
    target=AlertMatch(metric=("ttft_ms", "tps")),
    equal=("provider", "region"),
)


def labels(record):
    """What the round's inhibit stage gives the matchers (round.inhibit_stage), for these tests' rules."""
    if record.slo is not None:
        metric = ("error_rate",) if record.slo == "avail" else ("ttft_ms",)
        return {"rule": record.rule, "slo": record.slo, "metric": metric, "kind": "slo", "severity": record.severity}
    kind = KINDS.get(record.rule)
    return {"rule": record.rule, "slo": None, "metric": record.metric, "kind": kind, "severity": record.severity}


def run(*records, rules=(), rule_of_id=None):
    return inhibit(keyed(*records), rules, labels, rule_of_id)


def by(out):
    """(rule, scope key) -> inhibited_by, for the inhibited ones."""
    return {k: r.inhibited_by for k, r in out.items() if r.inhibited_by is not None}


def errors(region: str = "r1", **fields):
    return alert("errors", target_scope("m1", region=region), metric="error_rate", **fields)


def slow(model: str = "m1", region: str = "r1", **fields):
    return alert("slow", target_scope(model, region=region), **fields)


def slo_alert(name: str, scope, **fields):
    return alert(f"slo:{name}", scope, metric="burn_rate", slo=name, **fields)


# ------------------------------------------------------------------ structural


def test_a_provider_region_alert_inhibits_its_rules_targets_and_vantage_alerts_in_its_group():
    group = alert("slow", Scope("p", "r1"), id=7)
    member = slow("m1", id=1)
    seen_from = alert("slow", target_scope("m2", agent="a1"), id=2)
    other_region = slow("m1", region="r2", id=3)
    other_rule = alert("other", target_scope("m1"), id=4)
    out = run(group, member, seen_from, other_region, other_rule)
    assert by(out) == {("slow", member.scope.key): 7, ("slow", seen_from.scope.key): 7}
    assert out[("slow", member.scope.key)].inhibitor == ("slow", "p@r1")
    assert out[("slow", "p@r1")].inhibited_by is None


def test_an_agent_wide_alert_inhibits_that_agents_vantage_alerts_of_its_rule():
    agent_wide = alert("slow", Scope.of_agent("a1"), id=9)
    mine = alert("slow", target_scope("m1", agent="a1"), id=1)
    another_agents = alert("slow", target_scope("m1", agent="a2"), id=2)
    another_rules = alert("other", target_scope("m1", agent="a1"), id=3)
    target = slow("m2", id=4)  # a target alert is the quorum's, never one agent's
    out = run(agent_wide, mine, another_agents, another_rules, target)
    assert by(out) == {("slow", mine.scope.key): 9}
    assert out[("slow", mine.scope.key)].inhibitor == ("slow", "agent:a1")


def test_a_vantage_alert_under_both_a_group_and_its_agent_is_the_groups():
    group, agent_wide = alert("slow", Scope("p", "r1"), id=7), alert("slow", Scope.of_agent("a1"), id=9)
    seen_from = alert("slow", target_scope("m1", agent="a1"), id=1)
    assert by(run(group, agent_wide, seen_from)) == {("slow", seen_from.scope.key): 7}


# ------------------------------------------------------------------ inhibit: rules


def test_a_firing_source_inhibits_live_targets_whose_equal_labels_match():
    source = errors(id=1)
    same_group = slow("m2", id=2)
    pending = slow("m3", state="pending", id=3)  # a live target is inhibited whether pending or firing
    elsewhere = slow("m1", region="r2", id=4)
    tps = alert("other", target_scope("m4"), metric="tps", id=5)
    out = run(source, same_group, pending, elsewhere, tps, rules=[ERRORS_OVER_LATENCY])
    assert by(out) == {("slow", same_group.scope.key): 1, ("slow", pending.scope.key): 1, ("other", tps.scope.key): 1}
    assert out[("slow", same_group.scope.key)].inhibitor == ("errors", source.scope.key)
    assert by(run(source, same_group)) == {}  # no rules: no inhibition between rules


def test_a_pending_source_does_not_inhibit():
    target = slow("m2", id=2)
    assert by(run(errors(state="pending", id=1), target, rules=[ERRORS_OVER_LATENCY])) == {}
    assert by(run(errors(id=1), target, rules=[ERRORS_OVER_LATENCY])) == {("slow", target.scope.key): 1}


def test_source_and_target_matchers_select_by_rule_slo_kind_and_severity():
    target = slow("m2", id=2)

    def inhibited(source_match: AlertMatch, target_match: AlertMatch, source=None) -> bool:
        rule = InhibitRule(name="r", source=source_match, target=target_match, equal=("provider",))
        return bool(by(run(source or errors(id=1), target, rules=[rule])))

    regression = AlertMatch(kind=("regression",))
    assert inhibited(AlertMatch(rule=("errors",)), regression)
    assert not inhibited(AlertMatch(rule=("other", "nope")), regression)
    assert inhibited(AlertMatch(kind=("change", "threshold")), AlertMatch(rule=("slow",)))
    assert not inhibited(AlertMatch(kind=("threshold",)), AlertMatch(kind=("threshold",)))
    assert inhibited(AlertMatch(severity=("page",)), AlertMatch(severity=("page",), metric=("ttft_ms",)))
    assert not inhibited(AlertMatch(severity=("ticket",)), regression)
    assert not inhibited(AlertMatch(severity=("page",)), AlertMatch(severity=("ticket",)))
    avail = slo_alert("avail", SloScope("provider", provider="p"), id=1)
    assert inhibited(AlertMatch(slo=("avail",)), regression, avail)
    assert inhibited(AlertMatch(kind=("slo",), metric=("error_rate",)), regression, avail)
    assert not inhibited(AlertMatch(slo=("latency",)), regression, avail)


def test_equal_labels_are_compared_and_null_equals_only_null():
    provider_wide = slo_alert("avail", SloScope("provider", provider="p"), id=1)  # no region: null
    target = slow("m2", id=2)
    latency_slo = slo_alert("latency", SloScope("provider", provider="p"), id=3)
    other_provider = slo_alert("latency", SloScope("provider", provider="q"), id=4)
    rule = InhibitRule(
        name="avail-over-latency",
        source=AlertMatch(slo=("avail",)),
        target=AlertMatch(metric=("ttft_ms",)),
        equal=("provider", "region"),
    )
    # The target's region r1 is not the SLO's null; the other SLO's null region is.
    assert by(run(provider_wide, target, latency_slo, other_provider, rules=[rule])) == {("slo:latency", "p/*"): 1}
    by_provider = InhibitRule(name="r", source=rule.source, target=rule.target, equal=("provider",))
    assert by(run(provider_wide, target, latency_slo, other_provider, rules=[by_provider])) == {
        ("slow", target.scope.key): 1,
        ("slo:latency", "p/*"): 1,
    }
    by_model = InhibitRule(name="r", source=rule.source, target=rule.target, equal=("model",))
    assert by(run(provider_wide, target, latency_slo, rules=[by_model])) == {("slo:latency", "p/*"): 1}


def test_no_equal_labels_inhibits_every_target():
    far = alert("slow", target_scope("m9", provider="q", region="r9"), id=2)
    rule = InhibitRule(name="r", source=AlertMatch(metric=("error_rate",)), target=AlertMatch(rule=("slow",)))
    assert by(run(errors(id=1), far, rules=[rule])) == {("slow", far.scope.key): 1}


def test_an_alert_never_inhibits_itself():
    pages = InhibitRule(
        name="pages", source=AlertMatch(severity=("page",)), target=AlertMatch(severity=("page",)), equal=("provider",)
    )
    alone = slow("m1", id=1)
    assert by(run(alone, rules=[pages])) == {}
    # Two alerts that match both sides: one inhibits the other, never both each other.
    out = run(alone, slow("m2", id=2), rules=[pages])
    assert by(out) == {("slow", "p/m2@r1:short"): 1}


def test_a_source_new_this_round_inhibits_as_unstored_and_names_itself():
    target = slow("m2", id=2)
    out = run(errors(id=None), target, rules=[ERRORS_OVER_LATENCY])
    inhibited = out[("slow", target.scope.key)]
    assert inhibited.inhibited_by == UNSTORED and inhibited.inhibitor == ("errors", "p/m1@r1:short")
    group = alert("slow", Scope("p", "r1"))  # a group alert opening this round
    assert out_of(run(group, target), target).inhibitor == ("slow", "p@r1")
    assert out_of(run(group, target), target).inhibited_by == UNSTORED


def out_of(out, record):
    return out[(record.rule, record.scope.key)]


def test_sources_not_inhibited_themselves_are_preferred():
    # The errors rule's group alert and one of its targets both match the source; the target sorts
    # first but is inhibited by its group, so the group is the one that inhibits the latency alert.
    group = alert("errors", Scope("p", "r1"), metric="error_rate", id=1)
    member = errors(id=2)
    latency = slow("m2", id=3)
    assert member.scope.key < group.scope.key
    out = run(member, group, latency, rules=[ERRORS_OVER_LATENCY])
    assert by(out) == {("errors", member.scope.key): 1, ("slow", latency.scope.key): 1}
    assert out_of(out, latency).inhibitor == ("errors", "p@r1")


def test_an_earlier_rule_keeps_what_it_inhibited():
    target = slow("m2", id=3)
    first = InhibitRule(name="a", source=AlertMatch(rule=("errors",)), target=AlertMatch(rule=("slow",)))
    second = InhibitRule(name="b", source=AlertMatch(rule=("other",)), target=AlertMatch(rule=("slow",)))
    other = alert("other", target_scope("m5"), id=2)
    assert by(run(errors(id=1), other, target, rules=[first, second]))[("slow", target.scope.key)] == 1
    assert by(run(errors(id=1), other, target, rules=[second, first]))[("slow", target.scope.key)] == 2


# ------------------------------------------------------------------ stickiness


def test_inhibited_by_another_rules_alert_stays_while_firing_after_the_source_is_gone():
    was = slow("m2", id=3, inhibited_by=1)
    # The errors alert resolved this round (its id is in the round), or in an earlier one (not).
    for rule_of_id in ({1: "errors"}, {}):
        out = run(was, rules=[ERRORS_OVER_LATENCY], rule_of_id=rule_of_id)
        assert out_of(out, was) is was and out_of(out, was).inhibited_by == 1
    pending = slow("m2", state="pending", id=3, inhibited_by=1)
    assert out_of(run(pending, rule_of_id={1: "errors"}), pending).inhibited_by is None


def test_inhibited_by_its_own_rules_group_is_released_when_the_group_resolves():
    was = slow("m2", id=3, inhibited_by=7)
    out = run(was, rule_of_id={7: "slow"})  # the group alert closed this round
    assert out_of(out, was).inhibited_by is None and out_of(out, was).inhibitor is None


def test_an_alert_nothing_inhibits_is_returned_as_it_is():
    record = slow("m2", id=3)
    assert out_of(run(record, errors(region="r2", id=1), rules=[ERRORS_OVER_LATENCY]), record) is record


def test_a_firing_alert_matching_both_sides_is_still_inhibited_by_a_source_of_the_other_side():
    # `pages over latency`: an error-rate page inhibits latency alerts. A latency page matches the
    # source too, but the error-rate alert firing beside it still makes it redundant.
    rule = InhibitRule(
        name="pages-over-latency",
        source=AlertMatch(severity=("page",)),
        target=AlertMatch(metric=("ttft_ms",)),
        equal=("provider", "region"),
    )
    for name in ("a-latency", "z-latency"):  # whether its rule sorts before the errors rule or after
        latency = alert(name, target_scope("m2"), id=2)
        assert by(run(errors(id=1), latency, rules=[rule])) == {(name, latency.scope.key): 1}


# ------------------------------------------------------------------ AlertMatch


def test_alert_match_needs_every_given_key_to_hold_one_of_its_values():
    labels_ = {"rule": "slow", "slo": None, "metric": "ttft_ms", "kind": "regression", "severity": "page"}
    assert AlertMatch(metric=("ttft_ms",)).matches(labels_)
    assert AlertMatch(metric=("tps", "ttft_ms"), severity=("page",)).matches(labels_)
    assert not AlertMatch(metric=("ttft_ms",), severity=("ticket",)).matches(labels_)
    assert not AlertMatch(rule=("fast",)).matches(labels_)
    assert not AlertMatch(slo=("avail",)).matches(labels_)  # null matches no value
    assert AlertMatch().matches(labels_)  # nothing asked: everything (the config refuses it)
    slo_labels = labels_ | {"slo": "lat", "metric": ("ttft_ms", "tps"), "kind": "slo"}
    assert AlertMatch(metric=("tps",)).matches(slo_labels)  # an SLO alert is about every bounded metric
    assert not AlertMatch(metric=("error_rate",)).matches(slo_labels)
    assert AlertMatch(kind=("slo",), slo=("lat",)).matches(slo_labels)


# ------------------------------------------------------------------ config


def load_inhibit(*entries, absent: bool = False):
    spec = config_spec()
    if not absent:
        spec["inhibit"] = list(entries)
    return load_config_text(json.dumps(spec), env={}).inhibit


def inhibit_errors(*entries) -> list[str]:
    with pytest.raises(ConfigError) as exc:
        load_inhibit(*entries)
    return exc.value.errors


def test_config_inhibit_loads_one_value_or_a_list_and_defaults_when_absent():
    (rule,) = load_inhibit(
        {
            "name": "slo-first",
            "source": {"kind": "slo", "severity": ["page"]},
            "target": {"metric": ["ttft_ms", "tps"], "rule": "slow"},
            "equal": ["provider", "region"],
        }
    )
    assert rule == InhibitRule(
        name="slo-first",
        source=AlertMatch(kind=("slo",), severity=("page",)),
        target=AlertMatch(metric=("ttft_ms", "tps"), rule=("slow",)),
        equal=("provider", "region"),
    )
    assert load_inhibit(absent=True) == DEFAULT_INHIBIT
    assert load_inhibit() == ()  # `inhibit: []`: no inhibition between rules


def test_the_default_inhibits_latency_by_a_paging_error_rate_in_the_same_provider_region():
    target = slow("m2", id=2)
    assert by(run(errors(id=1), target, rules=DEFAULT_INHIBIT)) == {("slow", target.scope.key): 1}
    assert by(run(errors(id=1, severity="ticket"), target, rules=DEFAULT_INHIBIT)) == {}
    assert by(run(errors(region="r2", id=1), target, rules=DEFAULT_INHIBIT)) == {}


def test_config_inhibit_errors_are_one_line_naming_the_path():
    source, target = {"metric": "error_rate"}, {"kind": "regression"}
    assert inhibit_errors({"name": "x", "source": source, "target": target, "equal": ["zone"]}) == [
        "inhibit[0].equal: unknown label 'zone'; expected one of provider, model, region, prompt, agent"
    ]
    assert inhibit_errors(
        {"name": "x", "source": source, "target": target}, {"name": "y", "source": source, "target": {}}
    ) == [
        "inhibit[1].target: name at least one of rule, slo, metric, kind, severity: an empty matcher matches every alert"
    ]
    (unknown,) = inhibit_errors({"name": "x", "source": {"colour": "red"}, "target": target})
    assert unknown.startswith("inhibit[0].source.colour: unknown key") and "\n" not in unknown
