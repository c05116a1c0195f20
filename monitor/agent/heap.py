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
the same measurement no full collection of more than a few ms was left.
Frozen objects are still freed by reference counting; only a reference cycle
among them would never be collected, so the heap is collected before each
freeze and thawed around a config reload, which replaces the targets' state.

The heap grows during the first interval (connections in each lane's pool,
per-route duration estimates, metric series), so it is frozen once at start
and once more after the first full round of probes.
"""

from __future__ import annotations

import asyncio
import gc
import logging

log = logging.getLogger(__name__)

SETTLE_CAP_S = 600.0  # the second freeze waits one round of probes, at most this long


def freeze() -> int:
    """Collect what is garbage now, then freeze everything alive; the frozen object count."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def thaw() -> None:
    gc.unfreeze()


class HeapFreezer:
    """Freezes the heap at start and after the first round of probes; thaws and re-freezes on reload.

    For a process of its own (`firsttoken run`, a probe worker): a test process hosting
    many services would freeze their garbage for good, so services in tests leave it off.
    """

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._later: asyncio.TimerHandle | None = None

    def settle(self, round_s: float) -> None:
        """Freeze now and once more `round_s` from now (one interval: every target probed once)."""
        if not self.enabled:
            return
        frozen = freeze()
        log.debug("heap frozen: %d objects", frozen)
        if self._later is not None:
            self._later.cancel()
        self._later = asyncio.get_running_loop().call_later(min(max(round_s, 1.0), SETTLE_CAP_S), freeze)

    def reshape(self, round_s: float) -> None:
        """The targets were replaced: let the old ones' state be collected, then settle again."""
        if not self.enabled:
            return
        thaw()
        self.settle(round_s)

    def close(self) -> None:
        if self._later is not None:
            self._later.cancel()
            self._later = None


def round_s(targets) -> float:
    """Seconds until every target has been probed once: the longest interval."""
    return max((t.interval_s for t in targets), default=60.0)
