"""The hold-and-repeat stage (DESIGN §5, §15), pure: which alerts notify this round, as row changes.

- A firing alert notifies once its hold is over: a target whose provider-region has other targets,
  a vantage alert and an SLO alert wait `group_wait` (and some probe intervals) after they fired,
  so alerts that belong together are grouped or inhibited before anybody is paged.
- Right after a provider-region alert resolves, its stragglers wait a hold again before paging alone.
- Inhibited or muted alerts notify nothing; firing alerts repeat every `repeat_interval`; an alert
  whose severity rose (an SLO burning faster) repeats at once with the new severity.
- A resolution is notified exactly when the firing was, so what a page opened is also closed; a
  pending alert that closes never notified anybody and leaves no row.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from monitor.alerts.records import FIRING, FIRING_EVENT, PENDING, REPEAT_EVENT, RESOLVED_EVENT, AlertRecord, Change


@dataclass(frozen=True, slots=True)
class Hold:
    """How one live alert's notifications are paced this round."""

    hold_s: float = 0.0  # wait this long after firing before the first notification
    repeat_interval_s: float = 4 * 3600.0
    released_at: datetime | None = None  # its provider-region group resolved at (targets only)
    escalated: bool = False  # its severity rose since it was last notified


def closed_change(record: AlertRecord, now: datetime) -> Change:
    if record.state == PENDING:
        return Change(record, delete=True)
    if record.last_notified_at is not None:  # the firing was sent: close what it opened
        return Change(replace(record, last_notified_at=now), (RESOLVED_EVENT,))
    return Change(record)


def notify(record: AlertRecord, hold: Hold, now: datetime) -> tuple[AlertRecord, tuple[str, ...]]:
    if record.state != FIRING or record.inhibited_by is not None or record.muted is not None:
        return record, ()
    if record.last_notified_at is None:
        held_from = record.fired_at or record.started_at
        if hold.released_at is not None and hold.released_at > held_from:
            # Its group just resolved: the stragglers of a provider incident clear a sample or two
            # later; only one still firing a full hold after that pages on its own.
            held_from = hold.released_at
        if now >= held_from + timedelta(seconds=hold.hold_s):
            return replace(record, last_notified_at=now), (FIRING_EVENT,)
        return record, ()
    if hold.escalated or (now - record.last_notified_at).total_seconds() >= hold.repeat_interval_s:
        return replace(record, last_notified_at=now), (REPEAT_EVENT,)
    return record, ()
