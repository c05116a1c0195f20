"""One alert round's write step, as the engine does it: the changes stored, then incidents drafted from
them, in one transaction (an alert of a hand-made change is matched to its live row, as the engine's
round would have)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from monitor.alerts.records import Change
from monitor.alerts.store import apply_changes, load_live
from monitor.incidents.store import draft_incidents


def write_round(db, changes, config, at: datetime) -> int:
    """The number of incident updates written."""
    with db.begin() as conn:
        live = {(r.rule, r.scope.key): r.id for r in load_live(conn)}
        stored = [
            Change(replace(c.record, id=c.record.id or live.get((c.record.rule, c.record.scope.key))), c.events)
            for c in changes
        ]
        apply_changes(conn, stored, [], dashboard_url=None, now=at)
        return draft_incidents(conn, stored, config, at)
