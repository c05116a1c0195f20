"""Keep full garbage collections off the probes' event loop: freeze the long-lived heap.

A probe's TTFT is stamped on its event loop, so a pause of the loop is
measured as provider latency. Python's full (generation 2) collection walks
every tracked object the process holds: the config, the tokenizer, httpx and
the scheduler's jobs come to a few hundred thousand objects, and one full
collection of them took ~100 ms in a probe worker (measured with
`gc.callbacks`, 2,500 targets at 42 probes/s: one in every ~40 s, and every
probe whose first byte arrived meanwhile was stamped that much late).

Nearly all of those objects live as long as the process. `gc.freeze()` moves
what is alive into a permanent generation the collector no longer walks,
so a full collection then looks only at what the probes in flight hold; in
the same measurement, frozen, no full collection happened in the 40 s timed.
Frozen objects are still freed by reference counting; only a reference cycle
among them would never be collected. So the first freeze follows a full
collection, made before the schedule starts (no probe is in flight to stall),
and the heap is thawed and collected again around a config reload, which
replaces the targets' state.

The heap grows during the first interval (connections in each lane's pool,
APScheduler's jobs, per-route duration estimates, metric series), so it is
frozen once more after the first full round of probes. That one comes while
probes are in flight, so it collects only the young generations (a few ms)
before freezing: a cycle that became garbage in the old generation during
the first round stays for good, a one-time cost of at most what one round
left behind.
"""

from __future__ import annotations

import asyncio
import gc
import logging

log = logging.getLogger(__name__)

SETTLE_CAP_S = 600.0  # the second freeze waits one round of probes, at most this long


def freeze(full: bool = True) -> int:
    """Collect (everything, or the young generations only), then freeze what is alive; the frozen count."""
    gc.collect() if full else gc.collect(1)
    gc.freeze()
    return gc.get_freeze_count()


class HeapFreezer:
    """Freezes the heap at start and after the first round of probes; thaws and re-freezes on reload.

    For a process of its own (`firsttoken run`, a probe worker): a test process hosting
    many services would freeze their garbage for good, so services in tests leave it off.
    """

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._later: asyncio.TimerHandle | None = None

    def settle(self, round_s: float) -> None:
        """Freeze now, before the schedule starts, and once more `round_s` from now (one interval:
        every target probed once)."""
        if not self.enabled:
            return
        frozen = freeze()
        log.debug("heap frozen: %d objects", frozen)
        if self._later is not None:
            self._later.cancel()
        delay_s = min(max(round_s, 1.0), SETTLE_CAP_S)
        self._later = asyncio.get_running_loop().call_later(delay_s, freeze, False)

    def reshape(self, round_s: float) -> None:
        """The targets were replaced: let the old ones' state be collected, then settle again."""
        if not self.enabled:
            return
        gc.unfreeze()
        self.settle(round_s)

    def close(self) -> None:
        if self._later is not None:
            self._later.cancel()
            self._later = None


def round_s(targets) -> float:
    """Seconds until every target has been probed once: the longest interval."""
    return max((t.interval_s for t in targets), default=60.0)
