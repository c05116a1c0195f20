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
from monitor.alerts.scope import TARGET
from monitor.routing.rank import DEFAULT_MIN_AVAILABILITY

log = logging.getLogger(__name__)

WINDOW = timedelta(minutes=15)  # "now", as the status page reads it


def alternatives(
    engine: Engine, changes: Iterable[Change], now: datetime, *, agent: str | None = None
) -> dict[str, dict[str, Any] | None]:
    """target id -> its alternative, for every target-scoped change that notifies. Empty when the
    ranking cannot be read: a page goes out without its alternative rather than not at all."""
    from monitor.storage.queries.routes import load_routes
    from monitor.storage.queries.targets import list_targets

    targets = {c.record.scope.key for c in changes if c.events and c.record.scope.kind == TARGET}
    if not targets:
        return {}
    try:
        refs = {t.id: t for t in list_targets(engine)}
        out: dict[str, dict[str, Any] | None] = {}
        rankings: dict[tuple[str, str], list] = {}
        for target in sorted(targets):
            ref = refs.get(target)
            if ref is None:
                out[target] = None
                continue
            key = (ref.canonical, ref.prompt)
            if key not in rankings:
                ranked, _ = load_routes(
                    engine, now, WINDOW, prompt=ref.prompt, min_availability=DEFAULT_MIN_AVAILABILITY, agent=agent
                )
                rankings[key] = [r for r in ranked if r.model == ref.canonical]
            out[target] = best_other(rankings[key], target)
        return out
    except Exception as exc:
        log.warning("alternatives unavailable this round: %s", type(exc).__name__)
        return {}
