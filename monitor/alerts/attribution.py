"""Is it them or us (DESIGN §11), pure: split a latency change into a network part and a provider part.

Per sample, the network part is the time to response headers (which holds
DNS, connect, TLS and the request's trip) less the processing time the
provider reports for that part where a header gives it (`openai-processing-ms`,
kept in `server_timing.processing_ms`); the provider part is the rest of the
metric (TTFT: the wait for the first token after the headers). An alert's
attribution compares the median of each part since the condition began
with its median before, over the newest samples one series remembers
(`PathHistory`, a bounded ring kept in the detector checkpoint).

A streaming API sends its headers at once and then thinks, so a slower path
moves both parts' sum through the headers, a slower provider only after them.
"""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

NETWORK, PROVIDER = "network", "provider"
HISTORY = 48  # samples per series: 4 hours at 5-minute intervals, 48 minutes at 1-minute
# Samples needed before and since the change's start. Before: enough that the shift's own first samples
# (the detector needs a few to go pending) cannot move the median; once the ring has rolled past the
# start, the attribution made while it could still see both sides stands.
MIN_BEFORE, MIN_AFTER = 12, 2
LATENCY_RULE_METRICS = ("ttft_ms", "ttft_answer_ms", "total_ms")


def processing_ms(server_timing: Mapping[str, Any] | None) -> float | None:
    if not server_timing:
        return None
    value = server_timing.get("processing_ms")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0 else None


def split_sample(value_ms: float | None, ttfb_ms: float | None, processing: float | None) -> tuple[float, float] | None:
    """(network_ms, provider_ms) of one successful sample, or None without the timings to split it."""
    if value_ms is None or ttfb_ms is None:
        return None
    network = ttfb_ms - (processing or 0.0)
    network = min(max(network, 0.0), value_ms)
    return network, value_ms - network


class PathHistory:
    """The newest (timestamp, network_ms, provider_ms) of one series, for `attribute`."""

    __slots__ = ("points",)

    def __init__(self, points: Iterable[Sequence[float]] = ()) -> None:
        self.points: deque[tuple[float, float, float]] = deque(
            ((float(t), float(n), float(p)) for t, n, p in points), maxlen=HISTORY
        )

    def add(self, timestamp_s: float, split: tuple[float, float] | None) -> None:
        if split is not None:
            self.points.append((timestamp_s, split[0], split[1]))

    def attribute(self, since_s: float) -> dict[str, Any] | None:
        return attribute(self.points, since_s)

    def to_state(self) -> list[list[float]]:
        return [[round(t, 3), round(n, 3), round(p, 3)] for t, n, p in self.points]


def attribute(points: Iterable[tuple[float, float, float]], since_s: float) -> dict[str, Any] | None:
    """`{network_ms, provider_ms, dominant}`: each part's median since `since_s` less its median before;
    None when either side has too few samples to say."""
    before = [(n, p) for t, n, p in points if t < since_s]
    after = [(n, p) for t, n, p in points if t >= since_s]
    if len(before) < MIN_BEFORE or len(after) < MIN_AFTER:
        return None
    network = statistics.median(n for n, _ in after) - statistics.median(n for n, _ in before)
    provider = statistics.median(p for _, p in after) - statistics.median(p for _, p in before)
    return {"network_ms": round(network, 1), "provider_ms": round(provider, 1), "dominant": dominant(network, provider)}


def dominant(network_ms: float, provider_ms: float) -> str:
    """The part that moved more (by magnitude): a latency rule pages on a rise, a tps one on a fall."""
    return NETWORK if abs(network_ms) > abs(provider_ms) else PROVIDER


def combine(attributions: Iterable[Mapping[str, Any] | None]) -> dict[str, Any] | None:
    """Several vantage points' splits as one: the median of each part."""
    present = [a for a in attributions if a]
    if not present:
        return None
    network = statistics.median(float(a["network_ms"]) for a in present)
    provider = statistics.median(float(a["provider_ms"]) for a in present)
    return {"network_ms": round(network, 1), "provider_ms": round(provider, 1), "dominant": dominant(network, provider)}


def attribution_text(attribution: Mapping[str, Any] | None) -> str:
    """`mostly the network (+1,210 ms network, +20 ms provider)` for a summary; '' when unknown."""
    if not attribution:
        return ""
    network, provider = float(attribution["network_ms"]), float(attribution["provider_ms"])
    who = "the network path" if attribution["dominant"] == NETWORK else "the provider"
    return f"mostly {who} ({network:+,.0f} ms network, {provider:+,.0f} ms provider)"
