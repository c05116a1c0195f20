"""The alternatives of a round's route alerts, read from the routes ranking (the one database edge
of monitor.alerts.alternative). One ranking query per canonical model and prompt alerting, only
for rounds that notify something on a target."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine

from monitor.alerts.alternative import best_other
from monitor.alerts.records import Change
from monitor.alerts.scope import TARGET, VANTAGE
from monitor.routing.rank import DEFAULT_MIN_AVAILABILITY

log = logging.getLogger(__name__)

WINDOW = timedelta(minutes=15)  # "now", as the status page reads it


def alternatives(engine: Engine, changes: Iterable[Change], now: datetime) -> dict[str, dict[str, Any] | None]:
    """alert scope key -> its alternative, for every target or vantage change that notifies. A vantage
    alert's alternative is ranked from its own vantage point (DESIGN §11, §14). Empty when the ranking
    cannot be read: a page goes out without its alternative rather than not at all."""
    from monitor.storage.queries.routes import load_routes
    from monitor.storage.queries.targets import list_targets

    scopes = {
        c.record.scope.key: c.record.scope for c in changes if c.events and c.record.scope.kind in (TARGET, VANTAGE)
    }
    if not scopes:
        return {}
    try:
        refs = {t.id: t for t in list_targets(engine)}
        out: dict[str, dict[str, Any] | None] = {}
        rankings: dict[tuple[str, str, str | None], list] = {}
        for key, scope in sorted(scopes.items()):
            target = scope.target_key
            ref = refs.get(target)
            if ref is None:
                out[key] = None
                continue
            ranking = (ref.canonical, ref.prompt, scope.agent)
            if ranking not in rankings:
                ranked, _ = load_routes(
                    engine, now, WINDOW, prompt=ref.prompt, min_availability=DEFAULT_MIN_AVAILABILITY, agent=scope.agent
                )
                rankings[ranking] = [r for r in ranked if r.model == ref.canonical]
            out[key] = best_other(rankings[ranking], target)
        return out
    except Exception as exc:
        log.warning("alternatives unavailable this round: %s", type(exc).__name__)
        return {}
