"""What changed between two rankings, for `firsttoken routes --watch`. Pure.

A change is what a reader acts on: a route that appears or disappears, moves rank, or
crosses the availability floor. Its figures drifting by a few milliseconds between polls
is not a change (every poll would print every route).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from monitor.routing.rank import RankedRoute


@dataclass(frozen=True, slots=True)
class RouteChange:
    kind: str  # new | gone | rank | floor
    route: RankedRoute  # the route now (for `gone`: as it was)
    was: RankedRoute | None = None

    def line(self) -> str:
        s = self.route.stats
        where = f"{s.canonical_model} {s.prompt}: {s.target}"
        figures = f"p50 {_ms(s.ttft_p50_ms)}, {_pct(s.availability)}"
        if self.kind == "new":
            return f"{where} new at rank {self.route.rank} ({figures})"
        if self.kind == "gone":
            return f"{where} gone (no samples in the window)"
        was = self.was
        assert was is not None
        if self.kind == "floor":
            side = "back above" if self.route.eligible else "below"
            return f"{where} {side} the availability floor, rank {was.rank} -> {self.route.rank} ({figures})"
        return f"{where} rank {was.rank} -> {self.route.rank} ({figures})"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} ms"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def changes(before: Sequence[RankedRoute], after: Sequence[RankedRoute]) -> list[RouteChange]:
    """Changes from `before` to `after`, in the order of `after` (gone routes last)."""
    old = {r.stats.target: r for r in before}
    new = {r.stats.target: r for r in after}
    out = []
    for r in after:
        was = old.get(r.stats.target)
        if was is None:
            out.append(RouteChange("new", r))
        elif was.eligible != r.eligible:
            out.append(RouteChange("floor", r, was))
        elif was.rank != r.rank:
            out.append(RouteChange("rank", r, was))
    out += [RouteChange("gone", r) for t, r in old.items() if t not in new]
    return out
