"""The render stage (monitor.alerts.render), pure: an alert's one-line summary from its fields and facts."""

from __future__ import annotations

from dataclasses import replace

from monitor.alerts.attribution import NETWORK
from monitor.alerts.records import RESOLVED, Facts
from monitor.alerts.render import render
from monitor.alerts.scope import Scope
from monitor.slo.scopes import SloScope

from .helpers import alert, target_scope

HEAD = "slow: ttft_ms of p/m1@r1:short is 412 ms, baseline 200 ms (+106%)"
NETWORK_SPLIT = {"network_ms": 1210.0, "provider_ms": 20.0, "dominant": NETWORK}
SPLIT_TEXT = "mostly the network path (+1,210 ms network, +20 ms provider)"


def firing(**fields):
    return alert(value=412.0, baseline=200.0, **fields)


def resolved(record, **fields):
    return replace(record, state=RESOLVED, **fields)


def test_a_firing_target_says_its_value_against_its_reference():
    assert render(firing(facts=Facts())) == HEAD
    threshold = firing(facts=Facts(reference="threshold"))
    assert render(threshold) == HEAD.replace("baseline", "threshold")
    assert render(alert(metric="error_rate", value=0.042, baseline=0.01)) == (
        "slow: error_rate of p/m1@r1:short is 4.2%, baseline 1.0% (+320%)"
    )


def test_the_seen_from_tail_only_when_the_facts_say_so_and_agents_are_known():
    agents = {"agents": ("a1",), "agents_clear": ("a2", "a3")}
    assert render(firing(facts=Facts(say_agents=True), **agents)) == f"{HEAD} — seen from a1 only; a2 and a3 normal"
    assert render(firing(facts=Facts(say_agents=False), **agents)) == HEAD
    assert render(firing(facts=Facts(say_agents=True))) == HEAD  # no agents known: nothing to say


def test_a_vantage_alert_names_its_target_and_the_split_of_the_change():
    record = firing(
        scope=target_scope(agent="a1"), agents=("a1",), attribution=NETWORK_SPLIT, facts=Facts(say_agents=True)
    )
    assert render(record) == f"{HEAD} — seen from a1; {SPLIT_TEXT}"
    assert render(replace(record, facts=Facts())) == f"{HEAD} — {SPLIT_TEXT}"


def test_an_alarm_held_as_its_agents_own_path_says_so():
    record = firing(scope=target_scope(agent="a1"), agents=("a1",), facts=Facts(own_path=("p",)))
    assert render(record) == f"{HEAD} — held as a1's own path since it began (a ticket, not a page)"
    several = render(replace(record, facts=Facts(own_path=("p", "q"))))
    assert several.startswith(f"{HEAD} — the network path from a1 towards p and q rose at once")
    assert render(replace(record, agents=())) == HEAD  # no agent to name


def test_a_resolved_target_says_what_it_resolved_at_and_why_without_the_seen_from_tail():
    record = firing(agents=("a1",), agents_clear=("a2",), attribution=NETWORK_SPLIT)
    assert render(resolved(record, value=190.0, facts=Facts(say_agents=True))) == (
        "resolved: slow: ttft_ms of p/m1@r1:short resolved at 190 ms, baseline 200 ms"
    )
    with_peak = resolved(record, value=190.0, fired_value=412.0, worst_value=900.0)
    assert render(replace(with_peak, facts=Facts(reason="no longer evaluated"))) == (
        "resolved: slow: ttft_ms of p/m1@r1:short resolved at 190 ms, baseline 200 ms;"
        " fired at 412 ms, worst 900 ms — no longer evaluated"
    )


def test_a_change_rule_says_the_labels():
    change = alert("flip", metric="answer", value_text="B", baseline_text="A", facts=Facts(reference="was"))
    assert render(change) == "flip: answer of p/m1@r1:short changed from A to B"
    assert render(replace(change, baseline_text=None)) == "flip: answer of p/m1@r1:short changed from n/a to B"
    assert render(resolved(change, facts=Facts(reason="rule removed"))) == (
        "resolved: flip: answer of p/m1@r1:short changed from A to B — rule removed"
    )


def test_a_provider_region_alert_counts_its_targets_and_gives_the_median():
    group = alert(scope=Scope("p", "r1"), value=500.0, baseline=100.0, facts=Facts(firing=3, members=4))
    head = "slow: 3 of 4 targets of p in r1 degraded; ttft_ms median 500 ms, baseline 100 ms (+400%)"
    assert render(group) == head
    assert render(replace(group, fired_value=300.0, worst_value=700.0)) == head  # the peak only once resolved
    assert render(resolved(group, fired_value=300.0, worst_value=700.0)) == (
        f"resolved: {head}; fired at 300 ms, worst 700 ms"
    )
    labels = alert("flip", Scope("p", "r1"), metric="answer", value_text="B", baseline_text="A", facts=group.facts)
    assert render(labels) == "flip: 3 of 4 targets of p in r1 degraded; answer mostly A -> B"


def test_an_agent_wide_alert_names_the_providers_and_whether_others_see_them_normal():
    record = alert(
        scope=Scope.of_agent("a1"),
        attribution=NETWORK_SPLIT,
        facts=Facts(providers=("p", "q"), targets=5, others_clear=True),
    )
    assert render(record) == (
        "slow: the path from a1 degraded towards 2 providers at once (p, q; 5 targets);"
        f" other vantage points see them normal — {SPLIT_TEXT}"
    )
    alone = replace(record, attribution=None, facts=Facts(providers=("p",), targets=1))
    assert render(alone) == (
        "slow: the path from a1 degraded towards 1 provider at once (p; 1 target);"
        " no other vantage point probes them: a1's own path moved, not the providers"
    )
    assert render(resolved(record)) == "resolved: slow: the path from a1 is normal again"


def test_an_slo_alert_gives_its_objective_burn_rate_and_budget():
    record = alert(
        "slo:chat",
        SloScope("target", "p", "m1", "r1", "short"),
        metric="burn_rate",
        slo="chat",
        value=15.23,
        baseline=14.4,
        burn_window="1h/5m",
        budget_remaining=0.873,
        facts=Facts(slo_objective=0.995, slo_period_s=30 * 86400),
    )
    assert render(record) == (
        "SLO chat (99.5% over 30d): p/m1@r1:short burns its error budget at 15.2x over 1h/5m (alerts at 14.4x);"
        " 87% of the budget left"
    )
    assert render(replace(record, scope=SloScope("provider", provider="p"), budget_remaining=None)) == (
        "SLO chat (99.5% over 30d): p/* burns its error budget at 15.2x over 1h/5m (alerts at 14.4x)"
    )
    assert render(resolved(record, facts=Facts(reason="no longer evaluated"))) == (
        "SLO chat: p/m1@r1:short no longer burns its error budget fast enough to alert (no longer evaluated)"
    )
    assert render(resolved(record, facts=Facts())) == (
        "SLO chat: p/m1@r1:short no longer burns its error budget fast enough to alert"
    )


def test_no_facts_reads_as_the_defaults():
    assert render(firing(facts=None)) == render(firing(facts=Facts())) == HEAD
    group = alert(scope=Scope("p", "r1"), value=500.0, baseline=100.0)
    assert render(group).startswith("slow: 0 of 0 targets of p in r1 degraded; ttft_ms median 500 ms, baseline 100 ms")
    slo = alert("slo:chat", SloScope("all"), metric="burn_rate", slo="chat", burn_window="1h/5m")
    assert render(slo) == "SLO chat: * burns its error budget at n/a over 1h/5m (alerts at n/a)"
    assert render(resolved(slo)) == "SLO chat: * no longer burns its error budget fast enough to alert"
    assert render(alert()) == "slow: ttft_ms of p/m1@r1:short is n/a, baseline n/a"
