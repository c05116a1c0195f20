"""Prompt caching on the dashboard (DESIGN §13): one table row per cache-probe target. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from monitor import fmt
from monitor.storage.queries.cache_figures import CacheFigures

CAPTION = (
    "Cache probes (`cache: true`) send each round a cold request (a prefix new to the provider's cache) and a "
    "warm one (the same prefix, just primed). Saving = cold TTFT p50 − warm TTFT p50; hit ratio = warm probes "
    "whose response read from the cache (or, where it says nothing, whose TTFT showed it). Cost saved: the "
    "cache reads at the input price less their `cached_input` price, less what writes cost above the input price."
)


def cache_rows(figures: Mapping[str, CacheFigures], prices: Mapping[str, Any]) -> list[dict[str, str]]:
    """Rows for the targets with cache probes, best saving first; `prices`: "provider/model" -> config Price."""
    rows = []
    for f in sorted(figures.values(), key=lambda f: -(f.saving_ms or float("-inf"))):
        provider_model = f.target.split("@", 1)[0]
        usd = f.saving_usd(prices.get(provider_model))
        rows.append(
            {
                "target": f.target,
                "warm probes": fmt.count(f.judged),
                "hit ratio": fmt.pct(f.hit_ratio),
                "cold TTFT p50": fmt.ms(f.cold_ttft_p50_ms),
                "warm TTFT p50": fmt.ms(f.warm_ttft_p50_ms),
                "saving": fmt.ms(f.saving_ms),
                "cache reads (tokens)": fmt.count(f.cache_read_tokens),
                "cost saved": "—" if usd is None else f"${usd:.4f}",
            }
        )
    return rows
