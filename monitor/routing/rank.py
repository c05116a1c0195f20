"""Rank the routes of each canonical model and prompt (DESIGN §10). Pure.

A route is one target: a provider × region serving a model, on one prompt.
Routes whose availability over the window is at or above the floor come first,
ordered by the chosen key (p50 TTFT, p50 TPS or cost per probe); the rest follow,
most available first, then by the same key. A fast route that fails is never ranked above a slower one
that answers: speed only counts among routes that are up.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

BY = ("ttft", "tps", "cost", "warm_ttft")
DEFAULT_MIN_AVAILABILITY = 0.99


@dataclass(frozen=True, slots=True)
class RouteStats:
    """What the window measured for one route; None where nothing was measured."""

    target: str
    provider: str
    model: str
    canonical_model: str
    region: str
    prompt: str
    samples: int  # measured probes (cancelled left out)
    ok: int
    ttft_p50_ms: float | None = None
    ttft_p75_ms: float | None = None
    ttft_p90_ms: float | None = None
    ttft_p99_ms: float | None = None
    tps_p50: float | None = None
    served_by: str | None = None  # the newest sample's upstream
    fallbacks: int | None = None  # samples that reported a fallback (None: not known for this window)
    cost_usd_sum: float = 0.0
    cost_samples: int = 0  # samples with a known cost
    # OpenRouter endpoint shape (GET /routes): availability over fixed recent windows.
    uptime: dict[str, float | None] = field(default_factory=dict)
    # Cache probes (DESIGN §13; None for a route without them): each half's TTFT p50 and the hit ratio.
    cold_ttft_p50_ms: float | None = None
    warm_ttft_p50_ms: float | None = None
    cache_hit_ratio: float | None = None

    @property
    def availability(self) -> float | None:
        return self.ok / self.samples if self.samples else None

    @property
    def cost_per_1k_probes_usd(self) -> float | None:
        return 1000 * self.cost_usd_sum / self.cost_samples if self.cost_samples else None


@dataclass(frozen=True, slots=True)
class RankedRoute:
    rank: int  # 1 is best, within its (model, prompt)
    eligible: bool  # availability at or above the floor
    stats: RouteStats

    @property
    def model(self) -> str:
        return self.stats.canonical_model

    @property
    def prompt(self) -> str:
        return self.stats.prompt


def _key(stats: RouteStats, by: str) -> tuple[int, float]:
    """Sort key within a tier: a route without the measurement goes last."""
    if by == "tps":
        value = stats.tps_p50
        return (0, -value) if value is not None else (1, 0.0)
    if by == "warm_ttft":  # routes without cache probes go last
        value = stats.warm_ttft_p50_ms
    else:
        value = stats.cost_per_1k_probes_usd if by == "cost" else stats.ttft_p50_ms
    return (0, value) if value is not None else (1, 0.0)


def _up(r: RouteStats, floor: float) -> bool:
    return r.availability is not None and r.availability >= floor


def rank_routes(
    routes: Iterable[RouteStats], min_availability: float = DEFAULT_MIN_AVAILABILITY, by: str = "ttft"
) -> list[RankedRoute]:
    """Every route ranked within its (canonical model, prompt), groups in name order."""
    if by not in BY:
        raise ValueError(f"by must be one of {', '.join(BY)}")
    groups: dict[tuple[str, str], list[RouteStats]] = {}
    for r in routes:
        groups.setdefault((r.canonical_model, r.prompt), []).append(r)
    out: list[RankedRoute] = []
    for key in sorted(groups):

        def order(r: RouteStats) -> tuple:
            up = _up(r, min_availability)
            below = 0.0 if up else -(r.availability or 0.0)  # below the floor: most available first
            return (not up, below, *_key(r, by), r.target)

        for i, r in enumerate(sorted(groups[key], key=order), start=1):
            out.append(RankedRoute(i, _up(r, min_availability), r))
    return out


def best_routes(ranked: Sequence[RankedRoute]) -> dict[tuple[str, str], RankedRoute]:
    """The rank-1 route of each (model, prompt)."""
    return {(r.model, r.prompt): r for r in ranked if r.rank == 1}
