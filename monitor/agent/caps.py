"""Concurrency caps that follow the schedule: sized by Little's law, resizable, and visible.

A provider-region's targets start `rate_per_s` probes a second (the sum of
1/interval); each takes `duration_s` on average, so about
`rate_per_s × duration_s` are in flight at once (Little's law). An `auto`
cap is that with headroom, within a hard ceiling: it never lets more probes
start than the schedule asks for (the schedule sets the rate, the cap only
how many may overlap), so sizing it up causes no 429s, and sizing it down
would only make probes queue and start late. A fixed cap (a number in the
config) is the operator's word on what a provider takes: kept as it is, and
reported when the schedule needs more.

`Gate` is a counting semaphore whose limit can change while probes wait,
which asyncio.Semaphore's cannot.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from dataclasses import dataclass, field

HEADROOM = 2.0  # in flight = 2 × Little's mean: bursts of slow probes, phases that bunch up
SPARE = 2  # and a couple more, for routes with a handful of targets
MIN_AUTO_CAP = 4
PER_ROUTE_CEILING = 64  # an auto cap never goes past this against one provider region
GLOBAL_CEILING = 1024  # nor this on one agent (sockets, memory)
INITIAL_DURATION_S = 5.0  # before a route's first probe returns: a flagship's TTFT and a short answer, generously
DURATION_EWMA = 0.1  # weight of each new probe in a route's mean duration
SHORT_OF_CAP = 1.0  # a route whose mean in-flight need reaches its cap cannot keep its schedule


def auto_cap(rate_per_s: float, duration_s: float, ceiling: int = PER_ROUTE_CEILING) -> int:
    """Probes in flight a route needs to keep its schedule, with headroom, within `ceiling`."""
    return max(MIN_AUTO_CAP, min(ceiling, math.ceil(HEADROOM * rate_per_s * duration_s) + SPARE))


class Gate:
    """At most `limit` holders; waiters served in order; `limit` may change at any time."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.in_use = 0
        self._waiters: deque[asyncio.Future] = deque()

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    async def acquire(self) -> None:
        if self.in_use < self.limit and not self._waiters:
            self.in_use += 1
            return
        future = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        try:
            await future  # the releaser counted us in before waking us
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # granted, then cancelled before we ran: hand the slot on
            else:
                self._waiters.remove(future)
            raise

    def release(self) -> None:
        self.in_use -= 1
        self._wake()

    def set_limit(self, limit: int) -> None:
        self.limit = limit
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_use < self.limit:
            future = self._waiters.popleft()
            if not future.done():
                self.in_use += 1
                future.set_result(None)


@dataclass
class RouteLoad:
    """One provider-region: its schedule, its probes' mean duration and wait, and its gate."""

    fixed_cap: int | None  # None: auto
    gate: Gate = field(default_factory=lambda: Gate(MIN_AUTO_CAP))
    targets: int = 0
    rate_per_s: float = 0.0
    duration_s: float = INITIAL_DURATION_S
    observed: int = 0
    queue_wait_ms: float = 0.0  # mean wait for a slot, same weighting as the duration

    @property
    def cap(self) -> int:
        return self.gate.limit

    def resize(self) -> None:
        self.gate.set_limit(
            self.fixed_cap if self.fixed_cap is not None else auto_cap(self.rate_per_s, self.duration_s)
        )

    def observe(self, duration_s: float, wait_ms: float) -> None:
        weight = DURATION_EWMA if self.observed else 1.0
        self.duration_s += weight * (duration_s - self.duration_s)
        self.queue_wait_ms += weight * (wait_ms - self.queue_wait_ms)
        self.observed += 1
        self.resize()

    def snapshot(self) -> RouteSnapshot:
        return RouteSnapshot(
            targets=self.targets,
            rate_per_s=self.rate_per_s,
            duration_s=self.duration_s,
            observed=self.observed,
            cap=self.cap,
            auto=self.fixed_cap is None,
            in_flight=self.gate.in_use,
            waiting=self.gate.waiting,
            queue_wait_ms=self.queue_wait_ms,
        )


@dataclass(frozen=True, slots=True)
class RouteSnapshot:
    """A provider-region's load and cap as /healthz and /metrics show it; crosses a pipe, and merges:
    probe workers each hold a shard of a route's targets under their own part of its cap."""

    targets: int
    rate_per_s: float
    duration_s: float
    observed: int
    cap: int
    auto: bool
    in_flight: int
    waiting: int
    queue_wait_ms: float

    @property
    def needed(self) -> float:
        """Mean probes in flight the schedule asks for (Little's law)."""
        return self.rate_per_s * self.duration_s

    def short(self) -> bool:
        """The cap is below what the schedule needs on average: probes queue and start late."""
        return self.observed > 0 and self.needed >= SHORT_OF_CAP * self.cap

    def describe(self, name: str) -> str:
        return (
            f"{name}: {self.targets} targets start {self.rate_per_s:.2f} probes/s taking {self.duration_s:.2f} s "
            f"on average, so ~{self.needed:.1f} in flight; its cap is {self.cap}"
            + ("" if self.auto else " (max_per_provider_region)")
        )

    @staticmethod
    def merge(parts: list[RouteSnapshot]) -> RouteSnapshot:
        """One route over several workers: counts and caps add up, durations and waits are rate-weighted."""
        rate = sum(p.rate_per_s for p in parts)

        def mean(value) -> float:
            return sum(value(p) * p.rate_per_s for p in parts) / rate if rate else value(parts[0])

        return RouteSnapshot(
            targets=sum(p.targets for p in parts),
            rate_per_s=rate,
            duration_s=mean(lambda p: p.duration_s),
            observed=sum(p.observed for p in parts),
            cap=sum(p.cap for p in parts),
            auto=all(p.auto for p in parts),
            in_flight=sum(p.in_flight for p in parts),
            waiting=sum(p.waiting for p in parts),
            queue_wait_ms=mean(lambda p: p.queue_wait_ms),
        )


def short_routes(snapshots: dict[tuple[str, str], RouteSnapshot]) -> list[str]:
    """Provider-regions whose cap cannot keep their schedule, in words."""
    return [
        snap.describe(f"{provider}@{region}") for (provider, region), snap in sorted(snapshots.items()) if snap.short()
    ]
