"""What the status site shows, read from the database: the public snapshot (`PublicStatus`: the
last 15 minutes, the quorum's alerts, maintenance) and the daily history of the shown targets by
the quorum (`statushistory.daily`). The history stands on the hourly rollups, whose open hours the
leader recomputes every OPEN_HOURS_EVERY_S (5 minutes): it is read again no more often than that.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from monitor.http import planned
from monitor.http.public import WINDOW, PublicStatus, Snapshot, shown_targets
from monitor.http.statussite import view
from monitor.storage.rollups import OPEN_HOURS_EVERY_S

log = logging.getLogger(__name__)
HISTORY_S = OPEN_HOURS_EVERY_S  # nothing newer can be in the hourly rollups sooner


def shown(config) -> list[view.Shown]:
    """The site's targets, each with the tightest TTFT bound of an SLO over it (its `slow` line)."""
    out = []
    for t in shown_targets(config):
        bound, name = None, None
        for slo in config.slos:
            limit = slo.good.ttft_ms.below if slo.good.ttft_ms is not None else None
            covers = limit is not None and slo.matches(t.provider, t.model, t.region, t.prompt)
            if covers and (bound is None or limit < bound):
                bound, name = float(limit), slo.name
        out.append(view.Shown(t.id, t.provider, t.model, bound, name))
    return out


def read_history(engine, config, targets: Sequence, now: datetime, days: int) -> view.History:
    """`days` daily bars up to `now` (today's so far) and the uptime windows, by the quorum."""
    from monitor.storage.queries import statushistory

    start = statushistory.day_start(now, days)
    spans = view.window_spans(days)
    windows = planned.windows_between(engine, config, start, now)
    daily = statushistory.daily(
        engine,
        start,
        now,
        [t.id for t in targets],
        {name: now - span for name, span in spans.items()},
        planned.excluded(windows, targets),
    )
    return view.History(
        daily.targets,
        tuple(d.date() for d in daily.day_starts),
        daily.probed_h,
        daily.down_h,
        daily.ttft_p50_ms,
        daily.windows,
        {name: span / timedelta(hours=1) for name, span in spans.items()},
        daily.maintenance_h,
    )


class SiteSource:
    """`read()`: the public snapshot and the site's view of it, now. Thread-safe; the snapshot has its
    own cache (PublicStatus). The history is read once, then again in the background when it is older
    than HISTORY_S (a render meanwhile uses the one it has: it never waits on 90 days of rollups)."""

    def __init__(self, engine, config: Callable[[], object], public: PublicStatus | None = None) -> None:
        self._engine = engine
        self._config = config
        self.public = public or PublicStatus(engine, config)
        self._history: tuple[float, tuple, view.History] | None = None
        self._reading = threading.Lock()  # held by the one history read under way

    def latest(self):
        """The newest public snapshot, without building one: what a render would show (StatusPages)."""
        return self.public.latest()

    def read(self) -> tuple[Snapshot, view.Site]:
        snap = self.public.snapshot()
        config = self._config()
        days = int(config.status_site.history_days)
        targets = shown_targets(config)
        key = (tuple(t.id for t in targets), days)
        cached = self._history
        if cached is None or cached[1] != key:
            cached = self._read_history(config, targets, snap.at, days, key, wait=True)
        elif time.monotonic() - cached[0] >= HISTORY_S:
            self._read_history(config, targets, snap.at, days, key, wait=False)
        site = view.build(
            snap,
            cached[2],
            shown(config),
            history_days=days,
            subscribe=config.smtp is not None,
            live_minutes=int(WINDOW / timedelta(minutes=1)),
        )
        return snap, site

    def _read_history(self, config, targets, now, days: int, key: tuple, *, wait: bool):
        """Read the history (and keep it), now (`wait`) or in a thread of its own if none is under way."""

        def work() -> None:
            try:
                history = read_history(self._engine, config, targets, now, days)
                self._history = (time.monotonic(), key, history)
            finally:
                self._reading.release()

        def behind() -> None:
            try:
                work()
            except Exception as exc:  # the history in hand stays; the next render tries again
                log.warning("status history not refreshed: %s", type(exc).__name__)

        if wait:
            self._reading.acquire()
            work()
            return self._history
        if self._reading.acquire(blocking=False):
            threading.Thread(target=behind, name="firsttoken-status-history", daemon=True).start()
        return self._history
