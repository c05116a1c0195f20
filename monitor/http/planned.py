"""Maintenance windows on the public status (DESIGN §16): what each covers of the shown components.

The windows are `monitor.maintenance.store.windows_between`'s (the config's, each occurrence; those
added at run time; providers' own scheduled ones). Here they become what the status shows:

- `notices`: the windows now and ahead (`AHEAD`), each with the components it covers;
- `under_maintenance`: the (provider, model) components a window covers now (their state);
- `excluded`: per target, the time inside our own windows (`ActiveWindow.ours`): neither up nor
  down in the uptime and the daily bars, as SLO budgets leave it out. A provider's announced window
  is shown, and its component is under maintenance meanwhile, but its minutes count as measured.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from monitor.http import statuspage as sp

AHEAD = timedelta(days=7)


def windows_between(engine, config, start: datetime, end: datetime) -> list:
    """Every maintenance window overlapping [start, end)."""
    from monitor.maintenance.store import windows_between as between

    with engine.connect() as conn:
        return between(conn, config.maintenance, start, end)


def _covered(window, targets: Iterable) -> tuple[tuple[str, str], ...]:
    return tuple(sorted({(t.provider, t.model) for t in targets if window.covers(t)}))


def notices(windows: Iterable, targets: Sequence, now: datetime) -> tuple[sp.Maintenance, ...]:
    """The windows running now or starting within AHEAD that cover a shown component, by start."""
    out = []
    for w in windows:
        components = _covered(w, targets)
        if components and w.ends_at > now and w.starts_at < now + AHEAD:
            key = f"{w.source}:{w.id if w.id is not None else w.name}:{w.starts_at.isoformat()}"
            out.append(sp.Maintenance(key, w.note or w.name, w.starts_at, w.ends_at, components))
    return tuple(sorted(out, key=lambda m: (m.starts_at, m.title)))


def under_maintenance(windows: Iterable, targets: Sequence, now: datetime) -> frozenset[tuple[str, str]]:
    return frozenset(c for w in windows if w.active(now) for c in _covered(w, targets))


def excluded(windows: Iterable, targets: Sequence) -> dict[str, list[tuple[float, float]]]:
    """target id -> the (start, end) epoch seconds of our own windows over it."""
    out: dict[str, list[tuple[float, float]]] = {}
    for w in windows:
        if not w.ours:
            continue
        for t in targets:
            if w.covers(t):
                out.setdefault(t.id, []).append((w.starts_at.timestamp(), w.ends_at.timestamp()))
    return out
