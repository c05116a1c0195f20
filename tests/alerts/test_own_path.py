"""A lone agent's own path (DESIGN §11, own_path.py), pure: which alarms are held as tickets, and which page."""

from __future__ import annotations

from datetime import UTC, datetime

from monitor.alerts.own_path import LoneAlarm, own_path_holds, own_path_text
from monitor.alerts.records import FIRING, PENDING, AlertRecord
from monitor.alerts.scope import Scope

P0 = Scope("p", "r1", "m0", "short")
P1 = Scope("p", "r1", "m1", "short")
Q0 = Scope("q", "r1", "m0", "short")
R0 = Scope("r", "r1", "m0", "short")
MEMBERS = {"p0": P0, "p1": P1, "q0": Q0, "r0": R0}
ALARM = {"p0": LoneAlarm("a", 1000.0)}


def splits(**network_ms: float):
    """An attribution per target: the given network rise, a provider part that barely moved."""

    def attribute(target: str, agent: str, since_s: float):
        assert agent == "a" and since_s == 1000.0
        if target not in network_ms:
            return None
        net = network_ms[target]
        return {"network_ms": net, "provider_ms": 10.0, "dominant": "network" if abs(net) > 10.0 else "provider"}

    return attribute


def record(scope: Scope, state: str) -> AlertRecord:
    return AlertRecord("ttft-regression", scope, state, "page", "ttft_ms", datetime(2026, 1, 1, tzinfo=UTC))


def test_a_network_rise_towards_another_provider_too_is_held_with_every_provider_that_moved():
    held = own_path_holds(ALARM, MEMBERS, {}, splits(p0=400.0, p1=390.0, q0=380.0, r0=250.0))
    assert held == {"p0": ("p", "q", "r")}


def test_the_other_provider_must_rise_by_half_as_much():
    assert own_path_holds(ALARM, MEMBERS, {}, splits(p0=400.0, q0=199.0, r0=-50.0)) == {}
    assert own_path_holds(ALARM, MEMBERS, {}, splits(p0=400.0, q0=200.0)) == {"p0": ("p", "q")}


def test_the_same_providers_other_targets_are_no_evidence():
    """Two models of one provider share its edge: their network parts rising together say nothing."""
    assert own_path_holds(ALARM, MEMBERS, {}, splits(p0=400.0, p1=400.0)) == {}


def test_a_provider_side_change_is_never_held():
    def attribute(target, agent, since_s):
        return {"network_ms": 300.0, "provider_ms": 900.0, "dominant": "provider"}

    assert own_path_holds(ALARM, MEMBERS, {}, attribute) == {}


def test_unknown_attribution_is_not_held():
    assert own_path_holds(ALARM, MEMBERS, {}, splits(q0=400.0)) == {}


def test_an_alarm_already_paging_stays_a_page():
    live = {P0.key: record(P0, FIRING)}
    assert own_path_holds(ALARM, MEMBERS, live, splits(p0=400.0, q0=400.0)) == {}
    # Pending pages nobody yet: it can still be held.
    live = {P0.key: record(P0, PENDING)}
    assert own_path_holds(ALARM, MEMBERS, live, splits(p0=400.0, q0=400.0)) == {"p0": ("p", "q")}


def test_a_held_alarm_stays_held_when_the_evidence_fades():
    """The live vantage alert remembers the decision: it never turns into a page half-way."""
    vantage = P0.seen_from("a")
    live = {vantage.key: record(vantage, FIRING)}
    assert own_path_holds(ALARM, MEMBERS, live, splits(p0=400.0)) == {"p0": ("p",)}


def test_the_words():
    assert own_path_text("a", ("p", "q", "r")).startswith("the network path from a towards p, q and r rose at once")
    assert "a ticket, not a page" in own_path_text("a", ("p",))
