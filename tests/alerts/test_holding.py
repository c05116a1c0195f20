"""The hold-and-repeat stage (monitor.alerts.holding), pure: which alerts notify now."""

from __future__ import annotations

from datetime import timedelta

from monitor.alerts.holding import Hold, closed_change, notify
from monitor.alerts.records import RESOLVED

from .helpers import T0, alert


def at(seconds: float):
    return T0 + timedelta(seconds=seconds)


def events(record, hold: Hold, now_s: float) -> tuple[str, ...]:
    return notify(record, hold, at(now_s))[1]


def test_a_firing_alert_notifies_at_once_without_a_hold():
    record = alert(fired_at=at(5))
    updated, sent = notify(record, Hold(), at(5))
    assert sent == ("firing",) and updated.last_notified_at == at(5)
    assert updated.state == "firing" and updated.fired_at == at(5)


def test_the_hold_counts_from_when_it_fired():
    record = alert(started_at=at(0), fired_at=at(20))  # pending from 0, firing from 20
    hold = Hold(hold_s=30.0)
    assert notify(record, hold, at(49)) == (record, ())
    assert events(record, hold, 50) == ("firing",)
    # No fired_at (never the case for a firing row, but the hold then counts from its start).
    assert events(alert(started_at=at(0), fired_at=None), hold, 30) == ("firing",)


def test_a_released_group_restarts_the_hold():
    record = alert(fired_at=at(0))
    hold = Hold(hold_s=30.0, released_at=at(100))
    assert events(record, hold, 129) == ()
    assert events(record, hold, 130) == ("firing",)
    # A release before it fired changes nothing.
    assert events(record, Hold(hold_s=30.0, released_at=at(-50)), 30) == ("firing",)


def test_inhibited_muted_or_not_firing_alerts_notify_nothing():
    hold = Hold(repeat_interval_s=60.0)
    for record in (
        alert(inhibited_by=3),
        alert(inhibited_by=0),  # inhibited by an alert new this round (UNSTORED)
        alert(muted="silence", silenced=True),
        alert(muted="maintenance", silenced=True),
        alert(state="pending"),
        alert(inhibited_by=3, last_notified_at=at(0)),  # nor repeat, nor escalate
        alert(muted="silence", last_notified_at=at(0)),
    ):
        assert notify(record, hold, at(3600)) == (record, ())
        assert notify(record, Hold(escalated=True), at(3600)) == (record, ())


def test_a_notified_alert_repeats_after_its_repeat_interval():
    record = alert(last_notified_at=at(100))
    hold = Hold(repeat_interval_s=3600.0)
    assert notify(record, hold, at(3699)) == (record, ())
    updated, sent = notify(record, hold, at(3700))
    assert sent == ("repeat",) and updated.last_notified_at == at(3700)
    # The hold is for the first notification only.
    assert events(record, Hold(hold_s=10_000.0, repeat_interval_s=3600.0), 3700) == ("repeat",)


def test_an_escalated_alert_repeats_at_once():
    record = alert(last_notified_at=at(100), severity="page")
    updated, sent = notify(record, Hold(repeat_interval_s=3600.0, escalated=True), at(101))
    assert sent == ("repeat",) and updated.last_notified_at == at(101) and updated.severity == "page"


def test_a_closed_pending_alert_is_deleted():
    record = alert(state="pending", id=4)
    change = closed_change(record, at(10))
    assert change.delete and change.events == () and change.record is record


def test_a_resolved_alert_that_was_notified_sends_its_resolution():
    record = alert(state=RESOLVED, resolved_at=at(50), last_notified_at=at(10), id=4)
    change = closed_change(record, at(60))
    assert change.events == ("resolved",) and not change.delete
    assert change.record.last_notified_at == at(60) and change.record.resolved_at == at(50)


def test_a_resolved_alert_nobody_was_told_of_is_written_without_an_event():
    record = alert(state=RESOLVED, resolved_at=at(50), id=4)
    change = closed_change(record, at(60))
    assert change.events == () and not change.delete and change.record is record
    # Inhibited or muted while it fired: still nothing to close.
    muted = alert(state=RESOLVED, resolved_at=at(50), muted="silence", silenced=True)
    assert closed_change(muted, at(60)).events == ()
