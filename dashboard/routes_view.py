"""Rows for the Compare page's "best route now" table: the routes ranking, read by a person. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dashboard import ui
from monitor.routing.rank import RankedRoute


def best_route_rows(ranked: Sequence[RankedRoute]) -> list[dict[str, Any]]:
    """One row per canonical model: its rank-1 route, the runner-up, and how many routes are up."""
    groups: dict[str, list[RankedRoute]] = {}
    for r in ranked:
        groups.setdefault(r.model, []).append(r)
    rows = []
    for model, routes in sorted(groups.items()):
        best = routes[0]
        s = best.stats
        runner_up = routes[1].stats.target if len(routes) > 1 else "—"
        rows.append(
            {
                "model": model,
                "best route": s.target if best.eligible else f"{s.target} (below the floor)",
                "served by": s.served_by or "—",
                "TTFT p50": ui.ms(s.ttft_p50_ms),
                "TTFT p90": ui.ms(s.ttft_p90_ms),
                "availability": ui.pct(s.availability),
                "routes up": f"{sum(r.eligible for r in routes)} of {len(routes)}",
                "fell back": sum(1 for r in routes if r.stats.fallbacks),
                "next best": runner_up,
            }
        )
    return rows
