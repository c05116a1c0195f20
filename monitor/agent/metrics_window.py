"""Per-target recent percentiles for /metrics: a few series a target instead of its own histograms.

Per-target histograms cost ~22 series each (one per bucket, plus sum and count):
four of them made /metrics 12.5 KB a target, 76 MB at 5,000 targets, and a shared
Prometheus paid for every series. A target's latency over the last five minutes is
a handful of samples (one a minute), which three numbers describe as well as a
histogram would: the summary `firsttoken_target_ttft_seconds{quantile="0.5"|"0.9"|"0.99"}`,
computed here from the target's OK samples of the last `window_s` (the recording
rules' `_5m`). A target with no sample in the window has no series (it goes stale
in Prometheus rather than repeat an old value). The distribution's shape stays
available per provider region (metrics.py's histograms).

Rendering follows monitor.agent.metrics_series: each series keeps its text until it
changes (a new sample, or one leaving the window), and the body comes in chunks.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence

from prometheus_client.utils import floatToGoString

from monitor.agent.metrics_series import _braces, chunked

WINDOW_S = 300.0


def quantile(ordered: Sequence[float], q: float) -> float:
    """The q-quantile of sorted values, interpolated between the closest ranks (numpy's default)."""
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


class _Window:
    __slots__ = ("changed", "prefixes", "text", "values")

    def __init__(self, prefixes: list[str]) -> None:
        self.prefixes = prefixes
        self.values: deque[tuple[float, float]] = deque()  # (monotonic time, value), oldest first
        self.changed = True
        self.text = b""


class WindowQuantiles:
    """A summary family `name{labels…, quantile}`: `observe(label_values, value)`, `chunks()`."""

    def __init__(
        self,
        name: str,
        documentation: str,
        labelnames: Sequence[str],
        quantiles: Sequence[float],
        *,
        window_s: float = WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.labelnames = tuple(labelnames)
        self.quantiles = tuple(quantiles)
        self.window_s = window_s
        self._clock = clock
        # A summary: quantiles over a sliding time window is what Prometheus means by one. Its
        # _sum and _count are optional and left out (two series a target that nothing reads).
        self._header = f"# HELP {name} {documentation}\n# TYPE {name} summary\n".encode()
        self._series: dict[tuple[str, ...], _Window] = {}
        self._lock = threading.Lock()

    def observe(self, label_values: Sequence[str], value: float) -> None:
        key = tuple(label_values)
        now = self._clock()
        with self._lock:
            window = self._series.get(key)
            if window is None:
                pairs = list(zip(self.labelnames, key, strict=True))
                prefixes = [f"{self.name}{{{_braces([*pairs, ('quantile', str(q))])}}} " for q in self.quantiles]
                window = self._series[key] = _Window(prefixes)
            window.values.append((now, value))
            window.changed = True

    def chunks(self) -> Iterator[bytes]:
        horizon = self._clock() - self.window_s
        with self._lock:
            stale = []
            for window in self._series.values():
                values = window.values
                while values and values[0][0] < horizon:
                    values.popleft()
                    window.changed = True
                if window.changed:
                    window.changed = False
                    stale.append((window, sorted(v for _, v in values)))
            windows = list(self._series.values())
        for window, ordered in stale:  # rendered outside the lock: observations go on meanwhile
            window.text = (
                "".join(
                    f"{p}{floatToGoString(quantile(ordered, q))}\n"
                    for p, q in zip(window.prefixes, self.quantiles, strict=True)
                )
                if ordered
                else ""
            ).encode()
        yield from chunked([self._header, *(w.text for w in windows if w.text)])

    def render(self) -> str:
        return b"".join(self.chunks()).decode()
