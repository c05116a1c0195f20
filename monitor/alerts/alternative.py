"""The route to take instead, named in every alert on a route (DESIGN §14). Pure.

The best route now for the alert's canonical model and prompt, other than the alert's
own: the first route above the availability floor in the ranking of `firsttoken routes`
(monitor.routing.rank), or None when no other route is up. On the page it reads
"consider groq/llama-3.1-70b@global: p50 310 ms, 100%".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from monitor import fmt
from monitor.routing.rank import RankedRoute


def best_other(ranked: Sequence[RankedRoute], target: str) -> dict[str, Any] | None:
    """`alternative` {target, ttft_ms {p50}, availability} for an alert on `target`; `ranked` is the
    ranking of its canonical model and prompt."""
    for r in ranked:
        if r.eligible and r.stats.target != target:
            s = r.stats
            return {
                "target": s.target,
                "provider": s.provider,
                "model": s.model,
                "region": s.region,
                "ttft_ms": {"p50": None if s.ttft_p50_ms is None else round(s.ttft_p50_ms, 1)},
                "availability": None if s.availability is None else round(s.availability, 4),
            }
    return None


def alternative_text(alternative: Mapping[str, Any] | None) -> str:
    """`consider groq/llama-3.1-70b@global: p50 310 ms, 100%`, or "" without one."""
    if not alternative:
        return ""
    route = f"{alternative['provider']}/{alternative['model']}@{alternative['region']}"
    p50 = (alternative.get("ttft_ms") or {}).get("p50")
    availability = alternative.get("availability")
    figures = [f"p50 {fmt.metric('ttft_ms', p50)}" if p50 is not None else "p50 n/a"]
    if availability is not None:
        figures.append(f"{100 * availability:.3g}%")
    return f"consider {route}: {', '.join(figures)}"
