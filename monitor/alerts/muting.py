"""The mute stage (DESIGN §5, §15), pure: silences (and maintenance windows, §16) mute notifications,
never measurement or alert state. A muted alert says what muted it (`muted`); it pages when the
mute ends if it still fires."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from monitor.alerts.records import AlertRecord


def mute(live: Mapping[Any, AlertRecord], mutes: Sequence[Any]) -> dict[Any, AlertRecord]:
    """`mutes`: anything with `mutes(scope)` and a `kind` (silence, maintenance); the first that applies wins."""
    out = {}
    for key, record in live.items():
        by = next((m.kind for m in mutes if m.mutes(record.scope)), None)
        out[key] = (
            record
            if (by, by is not None) == (record.muted, record.silenced)
            else replace(record, muted=by, silenced=by is not None)
        )
    return out
