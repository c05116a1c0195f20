"""The SLO fold stage (monitor.alerts.slo_fold), pure: one SLO scope's burn verdicts → its alert."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta

from monitor.alerts.records import Facts
from monitor.alerts.slo_fold import SloVerdicts, closed_slos, fold_slo, rule_of
from monitor.config import load_config_text
from monitor.slo.burn import ESCALATED, FIRING, RESOLVED, Verdict
from monitor.slo.scopes import SloScope
from monitor.slo.windows import PAGE, TICKET, burn_windows

from .helpers import T0, alert, config_spec


def _slo():
    spec = config_spec()
    spec["slos"] = [{"name": "avail", "objective": "99.5%", "period": "30d"}]
    (slo,) = load_config_text(json.dumps(spec), env={}).slos
    return slo


SLO = _slo()
FAST, _, SLOW, _ = burn_windows(SLO.period_s)  # 1h/5m page at 14.4x, 1d/2h ticket at 3x
SCOPE = SloScope("provider", provider="p")
NOW = T0 + timedelta(minutes=10)


def ts(seconds: float) -> float:
    return (T0 + timedelta(seconds=seconds)).timestamp()


def verdict(at_s: float, window=FAST, rate: float | None = 20.0, event=None, severity=None) -> Verdict:
    holds = window is not None
    return Verdict(ts(at_s), window, rate if holds else None, rate if holds else None, ("a1",), event, severity)


def verdicts(*events: Verdict, severity=None, last=None, fired_ts=None, rebuilt=False, budget=None) -> SloVerdicts:
    return SloVerdicts(SLO, SCOPE, ("p/m1@r1:short",), events, severity, last, fired_ts, rebuilt, budget)


def live(**fields):
    values = {"metric": "burn_rate", "slo": "avail", "severity": TICKET, "id": 5, "burn_window": SLOW.name}
    return alert("slo:avail", SCOPE, **(values | fields))


def test_a_fired_verdict_opens_a_firing_alert_from_the_verdict():
    fired = verdict(30, FAST, 20.0, FIRING, PAGE)
    closed, record = fold_slo(verdicts(fired, severity=PAGE, last=fired, budget=0.9), None, NOW)
    assert closed == []
    assert (record.rule, record.slo, record.metric, record.scope) == ("slo:avail", "avail", "burn_rate", SCOPE)
    assert rule_of("avail") == record.rule
    assert (record.state, record.severity, record.id) == ("firing", PAGE, None)
    assert record.started_at == record.fired_at == T0 + timedelta(seconds=30)
    assert (record.value, record.baseline, record.burn_window) == (20.0, 14.4, "1h/5m")
    assert (record.fired_value, record.worst_value) == (20.0, 20.0)
    assert record.budget_remaining == 0.9 and record.last_evaluated_at == NOW
    assert record.facts == Facts(slo_objective=0.995, slo_period_s=30 * 86400.0)
    assert record.last_notified_at is None  # whether it pages now is the hold stage's call


def test_the_value_is_the_last_verdicts_while_firing():
    fired, later = verdict(30, SLOW, 4.0, FIRING, TICKET), verdict(60, SLOW, 5.5)
    _, record = fold_slo(verdicts(fired, severity=TICKET, last=later), None, NOW)
    assert (record.value, record.baseline, record.burn_window) == (5.5, 3.0, "1d/2h")
    assert record.worst_value == 5.5
    # A lower burn later keeps the worst; the value it fired at stays.
    _, calmer = fold_slo(verdicts(severity=TICKET, last=verdict(90, SLOW, 3.2)), record, NOW)
    assert (calmer.value, calmer.fired_value, calmer.worst_value) == (3.2, record.fired_value, 5.5)


def test_escalated_raises_the_severity_of_the_live_alert():
    record = live(started_at=T0, fired_at=T0)
    escalated = verdict(40, FAST, 16.0, ESCALATED, PAGE)
    closed, out = fold_slo(verdicts(escalated, severity=PAGE, last=escalated), record, NOW)
    assert closed == [] and out.severity == PAGE and out.id == 5
    assert (out.fired_at, out.burn_window, out.value) == (T0, "1h/5m", 16.0)
    # The burn's own severity above the record's raises it too (a verdict seen in an earlier round).
    _, raised = fold_slo(verdicts(severity=PAGE, last=verdict(40, FAST, 16.0)), record, NOW)
    assert raised.severity == PAGE
    # Escalated, then cleared in the same round: it resolves at the severity it reached.
    cleared = verdict(50, None, event=RESOLVED)
    (done,), out = fold_slo(verdicts(escalated, cleared, last=escalated), record, NOW)
    assert out is None and (done.severity, done.state) == (PAGE, "resolved")
    # ...and never lowers it while it fires.
    _, kept = fold_slo(verdicts(severity=TICKET, last=verdict(40, SLOW, 3.1)), live(severity=PAGE), NOW)
    assert kept.severity == PAGE


def test_cleared_resolves_the_alert_at_the_verdicts_time():
    record = live(value=4.0, worst_value=6.0, fired_value=4.0)
    cleared = verdict(90, None, event=RESOLVED)
    closed, out = fold_slo(verdicts(cleared, last=verdict(80, SLOW, 3.5)), record, NOW)
    assert out is None
    (done,) = closed
    assert (done.state, done.resolved_at, done.id) == ("resolved", T0 + timedelta(seconds=90), 5)
    assert (done.value, done.worst_value) == (3.5, 6.0)  # the last burn seen while firing
    assert done.facts == Facts()  # no reason: the burn itself stopped


def test_fired_and_cleared_in_one_round_closes_it_and_a_new_firing_opens_again():
    fired, cleared = verdict(10, SLOW, 4.0, FIRING, TICKET), verdict(20, None, event=RESOLVED)
    closed, out = fold_slo(verdicts(fired, cleared, last=fired), None, NOW)
    assert out is None and [r.state for r in closed] == ["resolved"]
    again = verdict(30, SLOW, 4.0, FIRING, TICKET)
    closed, out = fold_slo(verdicts(fired, cleared, again, severity=TICKET, last=again), None, NOW)
    assert len(closed) == 1 and out.fired_at == T0 + timedelta(seconds=30)


def test_a_rebuilt_series_already_firing_opens_the_alert_without_an_event():
    last = verdict(50, FAST, 18.0)
    v = verdicts(severity=PAGE, last=last, fired_ts=ts(20), rebuilt=True)
    closed, record = fold_slo(v, None, NOW)
    assert closed == [] and record.state == "firing" and record.severity == PAGE
    assert record.started_at == record.fired_at == T0 + timedelta(seconds=20)
    assert (record.value, record.burn_window) == (18.0, "1h/5m")
    # A rebuilt series with its alert already live keeps that alert.
    existing = live(started_at=T0, fired_at=T0, severity=PAGE)
    _, kept = fold_slo(v, existing, NOW)
    assert (kept.id, kept.fired_at) == (5, T0)
    # Rebuilt and not firing: nothing opens.
    assert fold_slo(replace(v, severity=None), None, NOW) == ([], None)


def test_without_a_verdict_a_burn_that_no_longer_fires_closes_its_live_alert():
    closed, out = fold_slo(verdicts(severity=None), live(), NOW)
    assert out is None
    (done,) = closed
    assert (done.state, done.resolved_at) == ("resolved", NOW)
    assert fold_slo(verdicts(severity=None), None, NOW) == ([], None)


def test_the_budget_remaining_is_carried():
    _, fresh = fold_slo(verdicts(severity=TICKET, budget=0.42), live(budget_remaining=0.5), NOW)
    assert fresh.budget_remaining == 0.42
    _, kept = fold_slo(verdicts(severity=TICKET, budget=None), live(budget_remaining=0.5), NOW)
    assert kept.budget_remaining == 0.5 and kept.last_evaluated_at == NOW


def test_slos_no_longer_configured_resolve_with_a_reason():
    (done,) = closed_slos([live()], NOW)
    assert (done.state, done.resolved_at, done.facts.reason) == ("resolved", NOW, "no longer evaluated")
