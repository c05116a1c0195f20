"""Ranked routes as JSON objects, an OpenRouter `provider` block, a LiteLLM `model_list`. Pure.

Route names in the gateway formats are firsttoken's provider names: name a
provider after the gateway's own slug (OpenRouter `groq`, `together`,
`fireworks`...) and the block pastes into a request unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from monitor.routing.rank import RankedRoute, RouteStats


def _r(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def route_object(route: RankedRoute) -> dict[str, Any]:
    """One line of `firsttoken routes --json` (DESIGN §10)."""
    s = route.stats
    return {
        "model": s.canonical_model,
        "prompt": s.prompt,
        "rank": route.rank,
        "target": s.target,
        "provider": s.provider,
        "provider_model": s.model,
        "region": s.region,
        "served_by": s.served_by,
        "ttft_ms": {"p50": _r(s.ttft_p50_ms), "p90": _r(s.ttft_p90_ms), "p99": _r(s.ttft_p99_ms)},
        "tps": {"p50": _r(s.tps_p50)},
        "availability": None if s.availability is None else round(s.availability, 4),
        "samples": s.samples,
        "above_floor": route.eligible,
        "fallbacks": s.fallbacks,
        "cost_per_1k_probes_usd": _r(s.cost_per_1k_probes_usd, 4),
        **_cache(s),
    }


def _cache(s: RouteStats) -> dict[str, Any]:
    """A route with cache probes (DESIGN §13): what its cache is worth; nothing for the others."""
    if s.cold_ttft_p50_ms is None and s.warm_ttft_p50_ms is None:
        return {}
    saving = (
        None if s.cold_ttft_p50_ms is None or s.warm_ttft_p50_ms is None else s.cold_ttft_p50_ms - s.warm_ttft_p50_ms
    )
    return {
        "cache": {
            "cold_ttft_ms": {"p50": _r(s.cold_ttft_p50_ms)},
            "warm_ttft_ms": {"p50": _r(s.warm_ttft_p50_ms)},
            "saving_ms": _r(saving),
            "hit_ratio": None if s.cache_hit_ratio is None else round(s.cache_hit_ratio, 4),
        }
    }


def endpoint_fields(last_30m: RouteStats) -> dict[str, Any]:
    """OpenRouter's endpoint shape (its /models/{id}/endpoints stats), from the last 30 minutes."""
    s = last_30m
    return {
        "latency_last_30m": {
            "p50": _r(s.ttft_p50_ms),
            "p75": _r(s.ttft_p75_ms),
            "p90": _r(s.ttft_p90_ms),
            "p99": _r(s.ttft_p99_ms),
        },
        "throughput_last_30m": _r(s.tps_p50),
        "uptime_last_5m": _pct(s.uptime.get("5m")),
        "uptime_last_30m": _pct(s.uptime.get("30m")),
        "uptime_last_1d": _pct(s.uptime.get("1d")),
    }


def _pct(value: float | None) -> float | None:
    return None if value is None else round(100 * value, 2)  # OpenRouter reports uptime in percent


def _groups(ranked: Sequence[RankedRoute]) -> dict[tuple[str, str], list[RankedRoute]]:
    groups: dict[tuple[str, str], list[RankedRoute]] = {}
    for r in ranked:
        groups.setdefault((r.model, r.prompt), []).append(r)
    return groups


def openrouter_blocks(ranked: Sequence[RankedRoute]) -> list[dict[str, Any]]:
    """Per model and prompt: `provider: {order, ignore}` for an OpenRouter request.
    Order: providers with a route above the floor, best first; ignore: the others."""
    out = []
    for (model, prompt), routes in _groups(ranked).items():
        order: list[str] = []
        for r in routes:
            if r.eligible and r.stats.provider not in order:
                order.append(r.stats.provider)
        ignore = sorted({r.stats.provider for r in routes} - set(order))
        out.append({"model": model, "prompt": prompt, "provider": {"order": order, "ignore": ignore}})
    return out


def litellm_model_list(ranked: Sequence[RankedRoute]) -> dict[str, Any]:
    """A LiteLLM router `model_list`: one deployment per route above the floor under
    the canonical model name, `order` the rank (LiteLLM tries lower orders first)."""
    entries = []
    seen: set[tuple[str, str, str]] = set()
    for (model, _prompt), routes in _groups(ranked).items():
        order = 0
        for r in routes:
            key = (model, r.stats.provider, r.stats.model)
            if not r.eligible or key in seen:
                continue
            seen.add(key)
            order += 1
            entries.append(
                {
                    "model_name": model,
                    "litellm_params": {"model": f"{r.stats.provider}/{r.stats.model}", "order": order},
                }
            )
    return {"model_list": entries}


def table_lines(ranked: Sequence[RankedRoute]) -> list[str]:
    header = (
        f"{'rank':<5}{'model':<22}{'prompt':<12}{'target':<44}{'p50':>8}{'p90':>8}{'p99':>8}"
        f"{'tps':>7}{'avail':>8}{'n':>7}  {'served_by':<24}{'$/1k':>8}"
    )
    lines = [header]
    for r in ranked:
        s = r.stats
        cost = s.cost_per_1k_probes_usd
        lines.append(
            f"{r.rank if r.eligible else str(r.rank) + '*':<5}{s.canonical_model[:21]:<22}{s.prompt[:11]:<12}"
            f"{s.target[:43]:<44}{_cell(s.ttft_p50_ms)}{_cell(s.ttft_p90_ms)}{_cell(s.ttft_p99_ms)}"
            f"{_cell(s.tps_p50, 7)}{_avail(s.availability)}{s.samples:>7}  {(s.served_by or '-')[:23]:<24}"
            f"{'-' if cost is None else f'{cost:.3f}':>8}"
        )
    if len(lines) == 1:
        lines.append("(no routes with samples in that window)")
    elif any(not r.eligible for r in ranked):
        lines.append("* below the availability floor: ranked after every route above it")
    return lines


def _cell(value: float | None, width: int = 8) -> str:
    return ("-" if value is None else f"{value:.0f}").rjust(width)


def _avail(value: float | None) -> str:
    return ("-" if value is None else f"{100 * value:.1f}%").rjust(8)
