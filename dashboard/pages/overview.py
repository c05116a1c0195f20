"""Overview: the whole matrix at a glance, firing alerts, headline numbers, agents."""

from __future__ import annotations

from datetime import timedelta

import streamlit as st

from dashboard import alert_rows, charts, coverage, data, status, ui
from dashboard.agent_rows import agent_rows
from dashboard.charts_status import GridCell

SILENT_AGENT = timedelta(minutes=10)

ui.header(
    "Overview",
    "Every provider × model × region × prompt, judged on its last 15 minutes against its own 24-hour baseline. "
    "Refreshes every 30 s.",
)
targets = ui.require_targets()


@st.fragment(run_every=timedelta(seconds=30))
def body() -> None:
    now = data.now()
    od = ui.load(data.overview_data, now)
    rows = od.overview.targets
    states = {}
    for r in rows:
        ratio = (
            r.recent_ttft_p50_ms / r.baseline_ttft_p50_ms if r.recent_ttft_p50_ms and r.baseline_ttft_p50_ms else None
        )
        states[r.target.id] = status.state_of(r.recent_measured, r.recent_failed, ratio)
    counts = {s: sum(v == s for v in states.values()) for s in status.STATES}
    firing = [a for a in od.live_alerts if a.state == "firing"]
    cols = st.columns(5)
    cols[0].metric("Healthy", counts[status.HEALTHY])
    cols[1].metric("Degraded", counts[status.DEGRADED])
    cols[2].metric("Down", counts[status.DOWN])
    cols[3].metric("No data (1 h)", counts[status.NO_DATA])
    cols[4].metric("Firing alerts", len(firing))

    cells = [
        GridCell(
            row=f"{r.target.provider}/{r.target.model}",
            column=f"{r.target.region} · {r.target.prompt}",
            state=states[r.target.id],
            text=ui.ms(r.recent_ttft_p50_ms),
            hover=(
                f"{states[r.target.id]}<br>TTFT p50 {ui.ms(r.recent_ttft_p50_ms)} (baseline "
                f"{ui.ms(r.baseline_ttft_p50_ms)}{coverage.note(r.baseline_hours * 3600, 86400)})"
                f"<br>errors {ui.count(r.recent_failed)} of {ui.count(r.recent_measured)} probes"
                f"<br>last sample {ui.ago(r.last_sample_at, now)}"
            ),
        )
        for r in rows
    ]
    st.subheader("Matrix")
    st.plotly_chart(charts.overview_grid(cells), width="stretch", key="overview-grid")
    # Plotly heatmaps send Streamlit no click selection: the cell's target is one pick away instead.
    chosen = st.selectbox(
        "Open a target", [r.target.id for r in rows], index=None, key="overview-open", placeholder="target id"
    )
    if chosen:
        st.switch_page("pages/target.py", query_params={"target": chosen})

    left, right = st.columns([3, 2])
    with left:
        st.subheader("Last hour per provider")
        st.dataframe(
            [
                {
                    "provider": h.provider,
                    "prompt": h.prompt,
                    "probes": ui.count(h.samples),
                    "error rate": coverage.figure(
                        ui.pct(h.failed / h.samples) if h.samples else None, h.covered_s, 3600
                    ),
                    "TTFT p50": ui.ms(h.ttft_p50_ms),
                    "TTFT p90": ui.ms(h.ttft_p90_ms),
                    "TPS p50": ui.rate(h.tps_p50),
                }
                for h in od.overview.headlines
            ],
            hide_index=True,
            width="stretch",
        )
    with right:
        st.subheader("Agents")
        if not od.agents:
            st.info("No probe agent has reported yet.")
        st.dataframe(agent_rows(od, now), hide_index=True, width="stretch")
        st.caption(
            "Each agent is a vantage point. Lag: the latest its probes started against their schedule; "
            "one column per provider: the share of that agent's probes of it that succeeded (last 15 min)."
        )
    if od.spend_month:
        st.subheader("Probe spend this month")
        st.caption(
            "From `prices:` (input, cached input, output including reasoning), since the 1st (UTC), "
            "as of the last rollup (every few minutes)."
        )
        rows = [(s.provider, s.cost_usd, s.probes) for s in od.spend_month]
        rows.append(("total", sum(r[1] for r in rows), sum(r[2] for r in rows)))
        st.dataframe(
            [{"provider": p, "spend": ui.usd(usd), "probes": n} for p, usd, n in rows],
            hide_index=True,
            width="stretch",
        )
    st.subheader("Firing and pending alerts")
    if not od.live_alerts:
        st.success("Nothing is firing.", icon=":material/check_circle:")
    else:
        st.dataframe(
            alert_rows.rows(od.live_alerts, now),
            hide_index=True,
            width="stretch",
            column_config=alert_rows.link_column(),
        )


body()
