"""Is this agent able to reach providers at all? Pure.

DESIGN §5: an agent that cannot reach any provider marks itself unhealthy
and its samples raise no provider alerts — when every provider fails from
one vantage point, the vantage point is the likely culprit. "Reached" means
an HTTP response came back, whatever its status: a 500 proves the network
works, a connect error or a timeout before headers does not.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from monitor.sample import ErrorKind, Sample

WINDOW = timedelta(minutes=10)
_NOT_MEASURED = {str(ErrorKind.CANCELLED)}


class Reachability:
    def __init__(self, window: timedelta = WINDOW) -> None:
        self._window = window
        self._last_reached: dict[str, datetime] = {}  # provider -> last HTTP response
        self._last_tried: dict[str, datetime] = {}

    def observe(self, sample: Sample) -> None:
        if sample.error_kind in _NOT_MEASURED:
            return
        self._last_tried[sample.provider] = sample.started_at
        if sample.http_status is not None:
            self._last_reached[sample.provider] = sample.started_at

    def healthy(self, now: datetime) -> bool:
        """Unhealthy only when providers were tried recently and none answered."""
        since = now - self._window
        tried = [p for p, at in self._last_tried.items() if at >= since]
        if not tried:
            return True  # nothing to judge by yet
        return any(self._last_reached.get(p, datetime.min.replace(tzinfo=now.tzinfo)) >= since for p in tried)
