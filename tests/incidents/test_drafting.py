"""Incident drafting (monitor.incidents.drafting), pure: one alert round's changes -> incident plans."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from monitor.alerts.records import FIRING, FIRING_EVENT, RESOLVED, RESOLVED_EVENT, AlertRecord, Change
from monitor.alerts.scope import Scope
from monitor.incidents.drafting import (
    CONFIRMED,
    DETECTED,
    IDENTIFIED,
    INVESTIGATING,
    LINKED,
    AlertMark,
    OpenIncident,
    draft,
    opens,
)
from monitor.slo.scopes import SloScope
from monitor.storage.queries.official import OfficialIncident

T0 = datetime(2026, 12, 3, 10, 0, tzinfo=UTC)
NOW = T0 + timedelta(minutes=5)
TARGET = Scope("openai", "us", "gpt-4o", "short")


def firing(scope=TARGET, *, rule="ttft", metric="ttft_ms", agents=("a1", "a2"), **kw) -> AlertRecord:
    values = {"severity": "page", "fired_at": T0, "last_notified_at": T0 + timedelta(minutes=1)} | kw
    return AlertRecord(rule, scope, FIRING, metric=metric, started_at=T0, agents=tuple(agents), **values)


def test_a_confirmed_page_on_a_target_opens_its_providers_incident_as_detected():
    (plan,) = draft([Change(firing(), (FIRING_EVENT,))], [], now=NOW)
    incident = plan.incident
    assert incident.id is None and incident.provider == "openai" and incident.state == INVESTIGATING
    assert incident.components == ("openai/gpt-4o",) and incident.started_at == T0
    assert incident.title == "openai gpt-4o: slow responses (time to first token)"
    assert incident.vantage_points == 2
    (update,) = plan.updates
    assert update.kind == DETECTED and update.at == T0
    assert "detected at 10:00 UTC, confirmed from 2 vantage points" in update.message
    assert "a1" not in update.message  # agents' names stay private
    assert [m.key for m in plan.marks] == [("ttft", TARGET.key, T0)]


def test_what_never_opens_an_incident():
    assert opens(firing())
    assert not opens(firing(severity="ticket"))
    assert not opens(firing(inhibited_by=7)), "inhibited: another alert already says it"
    assert not opens(firing(muted="silence")) and not opens(firing(muted="maintenance"))
    assert not opens(firing(last_notified_at=None)), "still held (group wait): its page has not gone out"
    assert not opens(firing(scope=TARGET.seen_from("a1"))), "a vantage alert is one vantage point's view"
    assert not opens(firing(scope=Scope.of_agent("a1"))), "nor an agent-wide alert"
    assert not opens(replace(firing(), state="pending"))
    assert not opens(firing(), shown=lambda provider, model: provider != "openai"), "not on the status site"
    assert opens(firing(scope=Scope("openai", "us")))  # a provider-region alert
    assert opens(firing(scope=SloScope("provider", "openai"), rule="slo:avail", metric="burn_rate"))
    assert not opens(firing(scope=SloScope("all"), rule="slo:all", metric="burn_rate")), "an SLO with no provider"


def test_a_second_alert_of_the_same_provider_joins_the_open_incident():
    other = Scope("openai", "us", "gpt-4o-mini", "short")
    plans = draft([Change(firing()), Change(firing(other, rule="errors", metric="error_rate"))], [], now=NOW)
    (plan,) = plans
    assert plan.incident.components == ("openai/gpt-4o", "openai/gpt-4o-mini") and len(plan.marks) == 2
    assert plan.incident.title == "openai gpt-4o and gpt-4o-mini: slow responses (time to first token)"
    existing = OpenIncident("openai", "t", INVESTIGATING, T0, ("openai/gpt-4o",), 2, None,
                            (AlertMark("ttft", TARGET.key, T0, FIRING, 2),), id=4)  # fmt: skip
    (joined,) = draft([Change(firing(other, rule="errors"))], [existing], now=NOW)
    assert joined.incident.id == 4 and joined.updates == ()  # no new update: still the same incident
    assert joined.incident.components == ("openai/gpt-4o", "openai/gpt-4o-mini")
    anthropic = draft([Change(firing(Scope("anthropic", "us", "claude", "short")))], [existing], now=NOW)
    assert [p.incident.provider for p in anthropic] == ["anthropic"]  # another provider: its own incident


def test_more_vantage_points_confirm_it_once_per_new_high():
    existing = OpenIncident("openai", "t", INVESTIGATING, T0, ("openai/gpt-4o",), 2, None,
                            (AlertMark("ttft", TARGET.key, T0, FIRING, 2),), id=4)  # fmt: skip
    (plan,) = draft([Change(firing(agents=("a1", "a2", "a3")))], [existing], now=NOW)
    assert [u.kind for u in plan.updates] == [CONFIRMED] and plan.incident.vantage_points == 3
    assert plan.updates[0].message == "Confirmed from 3 vantage points: openai/gpt-4o."
    same = replace(existing, vantage_points=3, alerts=(AlertMark("ttft", TARGET.key, T0, FIRING, 3),))
    fewer = draft([Change(firing(agents=("a1", "a2")))], [same], now=NOW)
    assert all(not p.updates for p in fewer), "fewer vantage points than announced: nothing to say"


def test_the_providers_own_incident_is_linked_once_and_identifies_it():
    theirs = OfficialIncident("openai", "inc1", "Elevated latency", "investigating", "minor",
                              T0 + timedelta(minutes=12), None, T0, "https://stspg.io/x")  # fmt: skip
    existing = OpenIncident("openai", "t", INVESTIGATING, T0, ("openai/gpt-4o",), 2, None,
                            (AlertMark("ttft", TARGET.key, T0, FIRING, 2),), id=4)  # fmt: skip
    (plan,) = draft([], [existing], now=NOW, official={"openai": [theirs]})
    assert plan.incident.official_id == "inc1" and plan.incident.state == IDENTIFIED
    (update,) = plan.updates
    assert (
        update.kind == LINKED
        and "Elevated latency" in update.message
        and "12 min after we detected it" in update.message
    )
    linked = replace(existing, official_id="inc1", state=IDENTIFIED)
    assert draft([], [linked], now=NOW, official={"openai": [theirs]}) == []  # nothing new to say
    far = replace(theirs, started_at=T0 + timedelta(hours=5))
    assert draft([], [existing], now=NOW, official={"openai": [far]}) == []  # not this one


def test_resolved_when_every_alert_of_the_incident_resolved():
    marks = (AlertMark("ttft", TARGET.key, T0, FIRING, 2), AlertMark("errors", "openai@us", T0, FIRING, 2))
    existing = OpenIncident("openai", "t", INVESTIGATING, T0, ("openai/*", "openai/gpt-4o"), 2, None, marks, id=4)
    one = replace(firing(), state=RESOLVED, resolved_at=NOW)
    (half,) = draft([Change(one, (RESOLVED_EVENT,))], [existing], now=NOW)
    assert half.incident.state == INVESTIGATING and half.updates == () and half.marks[0].state == RESOLVED
    other = replace(firing(Scope("openai", "us"), rule="errors"), state=RESOLVED, resolved_at=NOW)
    (done,) = draft([Change(other, (RESOLVED_EVENT,))], [half.incident], now=NOW)
    assert done.resolved and [u.kind for u in done.updates] == ["resolved"]
    assert (
        done.updates[0].message == "Resolved: openai (all models), openai/gpt-4o back to normal (affected for 5 min)."
    )


def test_an_alert_that_already_belongs_to_an_incident_opens_no_other():
    """An incident resolved by hand keeps its alerts: still firing, they open nothing new."""
    change = Change(firing())
    assert draft([change], [], now=NOW, known={("ttft", TARGET.key, T0)}) == []
    refired = Change(firing(fired_at=T0 + timedelta(hours=1)))  # the same rule and scope, firing again later
    assert len(draft([refired], [], now=NOW, known={("ttft", TARGET.key, T0)})) == 1


def test_a_reopened_incident_is_not_resolved_again_by_rounds_that_change_nothing():
    marks = (AlertMark("ttft", TARGET.key, T0, RESOLVED, 2),)
    reopened = OpenIncident("openai", "t", INVESTIGATING, T0, ("openai/gpt-4o",), 2, "x", marks, id=4)
    assert draft([], [reopened], now=NOW) == []


def test_an_alert_that_stopped_firing_unseen_resolves_its_incident_all_the_same():
    """A round whose drafting failed saw the alert resolve; the next one finds it in the alerts table."""
    existing = OpenIncident("openai", "t", INVESTIGATING, T0, ("openai/gpt-4o",), 2, None,
                            (AlertMark("ttft", TARGET.key, T0, FIRING, 2),), id=4)  # fmt: skip
    (plan,) = draft([], [existing], now=NOW, gone={("ttft", TARGET.key, T0)})
    assert plan.resolved and [u.kind for u in plan.updates] == ["resolved"]
