"""Count-based sliding windows over one series of probes: how many probes, and how many bad, started in
(t - W, t] for each window length W. Each probe is added once and evicted once per window, so a
month of 1-minute probes costs the same per probe whatever the windows."""

from __future__ import annotations

from array import array
from collections.abc import Iterable


class WindowCounts:
    def __init__(self, lengths_s: Iterable[float]) -> None:
        self.lengths_s = tuple(sorted(set(lengths_s)))
        if not self.lengths_s:
            raise ValueError("at least one window length")
        n = len(self.lengths_s)
        # 9 bytes a probe (a float64 and a byte): a 30-day SLO holds 3 days of probes per scope and agent.
        self._ts = array("d")
        self._bad = bytearray()
        self._base = 0  # absolute index of _ts[0]: the oldest probe still inside the longest window
        self._left = [0] * n  # absolute index of each window's oldest probe
        self._total = [0] * n
        self._bad_n = [0] * n
        self.last_ts: float | None = None

    def add(self, ts: float, bad: bool) -> None:
        """A probe started at `ts` (epoch seconds, not before the previous one's)."""
        if self.last_ts is not None and ts < self.last_ts:
            raise ValueError("probes must be added in time order")
        self._ts.append(ts)
        self._bad.append(1 if bad else 0)
        for i in range(len(self.lengths_s)):
            self._total[i] += 1
            self._bad_n[i] += bad
        self.last_ts = ts
        self.advance(ts)

    def advance(self, now: float) -> None:
        """Evict the probes that are no longer inside their windows at `now`."""
        end = self._base + len(self._ts)
        for i, length in enumerate(self.lengths_s):
            cutoff, left = now - length, self._left[i]
            while left < end and self._ts[left - self._base] <= cutoff:
                self._total[i] -= 1
                self._bad_n[i] -= self._bad[left - self._base]
                left += 1
            self._left[i] = left
        drop = self._left[-1] - self._base
        if drop > 1024 and drop * 2 > len(self._ts):  # amortised: compact once half is dead
            del self._ts[:drop], self._bad[:drop]
            self._base += drop

    def counts(self, length_s: float) -> tuple[int, int]:
        """(bad, total) in the window of this length, as of the last `add`/`advance`."""
        i = self.lengths_s.index(length_s)
        return self._bad_n[i], self._total[i]

    def history(self) -> list[tuple[float, bool]]:
        """The probes still inside the longest window, oldest first (to rebuild the series elsewhere)."""
        start = self._left[-1] - self._base
        return [(t, bool(b)) for t, b in zip(self._ts[start:], self._bad[start:], strict=True)]
