"""The demo's second vantage point (DESIGN §11), pure data: a far-away agent with its own path.

`demo-far` probes the short prompt of sim-openai and sim-anthropic in us-east
from further away (a steady +120 ms on its path), and twice its own link
congests (+1.2 s): for an hour at 55% of the history, and live for 8 minutes,
8 minutes after the demo starts. Both providers look slow from there only. The
new user sees one ticket about that agent's path each time — "seen from
demo-far only" — no page, and a line per vantage point on the Target page.

The backfill plays the path in simulated time (`VirtualTransport`'s `path_ms`);
live, a relay in front of the simulator plays the same `path_at` on the wire
(monitor/demo/far_agent.py), so history and live come from one model.
"""

from __future__ import annotations

from dataclasses import dataclass

from monitor.units import HOUR_S, MINUTE_S

FAR_AGENT = "demo-far"
FAR_PROVIDERS = ("sim-openai", "sim-anthropic")
FAR_REGION = "us-east"
FAR_PROMPT = "short"
FAR_PATH_MS = 120.0
CONGESTION_MS = 1200.0
# Live: after the early provider incidents have fired (incidents.py: +3 and +4 min), well before
# the +25 min one that both vantage points see; 16 probes at the default 30 s, enough to fire and resolve.
LIVE_CONGESTION_AFTER_S = 8 * MINUTE_S
LIVE_CONGESTION_S = 8 * MINUTE_S


@dataclass(frozen=True, slots=True)
class PathSpell:
    start_s: float
    end_s: float
    extra_ms: float


@dataclass(frozen=True, slots=True)
class Vantage:
    """An extra probe agent of the backfill: its name, the targets it probes, its path."""

    agent: str
    target_ids: tuple[str, ...]
    path_ms: float = 0.0
    spells: tuple[PathSpell, ...] = ()

    def path_at(self, now_s: float) -> float:
        return self.path_ms + sum(s.extra_ms for s in self.spells if s.start_s <= now_s < s.end_s)


def far_vantage(target_ids, epoch_s: float, history_s: float, live_s: float | None = None) -> Vantage:
    """demo-far over the cast's targets: its congested hour placed in the history that ends at `epoch_s`,
    then its spell in the live period that starts at `live_s` (the epoch)."""
    mine = tuple(
        t for t in target_ids if t.split("/", 1)[0] in FAR_PROVIDERS and t.endswith(f"@{FAR_REGION}:{FAR_PROMPT}")
    )
    start = epoch_s - history_s + 0.55 * history_s  # clear of the providers' own incidents on its targets
    spell = PathSpell(start, start + min(HOUR_S, 0.15 * history_s), CONGESTION_MS)
    live_start = (epoch_s if live_s is None else live_s) + LIVE_CONGESTION_AFTER_S
    live = PathSpell(live_start, live_start + LIVE_CONGESTION_S, CONGESTION_MS)
    return Vantage(FAR_AGENT, mine, FAR_PATH_MS, (spell, live))
