"""Compare: models side by side on the same prompt (the small-vs-flagship question)."""

from __future__ import annotations

import streamlit as st

from dashboard import cache_view, charts, data, routes_view, ui, urlstate
from monitor.storage.queries import spend

ui.header(
    "Compare",
    "Models side by side on the same prompt, regions pooled. Cost per 1,000 probes is what the probes recorded "
    "(the configured `prices` applied to each answer's own token counts, cached input included), by rollup hour.",
)
targets = ui.require_targets()
prompts = sorted({t.prompt for t in targets})
c1, c2 = st.columns([2, 3])
prompt = urlstate.bound(c1.selectbox, "Prompt", prompts, name="prompt", key="compare-prompt", default=prompts[0])
regions = sorted({t.region for t in targets})
chosen_regions = urlstate.bound(
    c2.multiselect, "Regions", regions, name="region", key="compare-regions", default=regions, placeholder="all"
)
range_label, span = ui.range_picker("compare-range", default="24 h")  # its own row: six segments at 1024 px
pool = [t for t in targets if not chosen_regions or t.region in chosen_regions]
now = data.now()
stats = ui.load(data.model_stats, tuple(t.id for t in pool), now - span, now)
on_prompt = [s for s in stats if s.prompt == prompt and s.measured]
if not on_prompt:
    st.info(f"No samples on prompt `{prompt}` in the last {range_label}.", icon=":material/info:")
    st.stop()

costs = spend.cost_per_1k_by_model(
    ui.load(data.recorded_costs, tuple(t.id for t in pool if t.prompt == prompt), now - span, now), pool
)
st.plotly_chart(charts.compare_bars(on_prompt, costs), width="stretch", key="compare-bars")
if not costs:
    st.caption("No `prices` configured for these models: the cost column stays empty.")
st.dataframe(
    [
        {
            "model": f"{s.provider}/{s.model}",
            "probes": ui.count(s.measured),
            "TTFT p50": ui.ms(s.ttft_p50_ms),
            "TTFT p90": ui.ms(s.ttft_p90_ms),
            "TPS p50": ui.rate(s.tps_p50),
            "error rate": ui.pct(s.error_rate),
            "cost / 1k probes": "—"
            if costs.get(f"{s.provider}/{s.model}") is None
            else f"${costs[f'{s.provider}/{s.model}']:.3f}",
        }
        for s in sorted(on_prompt, key=lambda s: s.ttft_p50_ms or float("inf"))
    ],
    hide_index=True,
    width="stretch",
)
# Prompt caching (DESIGN §13): the cache-probe targets on this prompt, what their cache is worth.
cached = ui.load(data.cache_figures, tuple(t.id for t in pool if t.prompt == prompt), now - span, now)
if cached:
    st.subheader("Prompt cache")
    st.dataframe(cache_view.cache_rows(cached, data.settings().full_prices), hide_index=True, width="stretch")
    st.caption(cache_view.CAPTION)
# Best route now: the `firsttoken routes` ranking of the last 30 minutes, per canonical model on this prompt.
ranked = [r for r in ui.load(data.ranked_routes, now) if r.prompt == prompt]
if ranked:
    st.subheader("Best route now (last 30 min)")
    st.dataframe(routes_view.best_route_rows(ranked), hide_index=True, width="stretch")
    fell_back = [r for r in ranked if r.stats.fallbacks]
    if fell_back:
        st.caption(
            "Fell back: "
            + ", ".join(f"`{r.stats.target}` ({r.stats.fallbacks} of {r.stats.samples})" for r in fell_back)
            + ". The response said a fallback happened, or named another upstream than the one pinned."
        )
# One above the other: side by side at 1024 px, each legend left a plot too narrow to read.
st.plotly_chart(charts.ttft_vs_prompt([s for s in stats if s.measured]), width="stretch", key="compare-prompt-len")
st.plotly_chart(charts.ttft_vs_tps(on_prompt), width="stretch", key="compare-scatter")
