"""SLOs: how much of each error budget is left, how fast it burns, and when it runs out (DESIGN §12)."""

from __future__ import annotations

import streamlit as st

from dashboard import charts_slo, data, slo_view, ui

ui.header(
    "SLOs",
    "Per SLO and scope: attainment over the period, the error budget left, the burn-down over the period, "
    "and the burn rate over each alert window beside the rate it alerts at (1x spends the budget in exactly one "
    "period). From the hourly and daily rollups, so up to a few minutes behind the live burn-rate alerts.",
)
ui.require_targets()
reports = ui.load(data.slo_reports, data.now())
if not reports:
    st.info("No `slos:` in the configuration. See docs/slos.md for a worked example.", icon=":material/info:")
    st.stop()

names = [r.slo.name for r in reports]
c1, c2 = st.columns([2, 3])
name = c1.selectbox("SLO", names, key="slo-name")
report = reports[names.index(name)]
if not report.scopes:
    st.info(f"No configured target matches SLO {name}.", icon=":material/info:")
    st.stop()
keys = [s.scope_key for s in report.scopes]
worst = min(range(len(keys)), key=lambda i: report.scopes[i].budget.remaining or 0.0)
key = c2.selectbox("Scope", keys, index=worst, key="slo-scope")
index = keys.index(key)
status = report.scopes[index]

m1, m2, m3, m4 = st.columns(4)
m1.metric("Attainment", slo_view.pct(status.budget.attainment, 3), help=f"objective {status.objective * 100:g}%")
m2.metric("Budget left", slo_view.pct(status.budget.remaining, 1))
m3.metric("Probes in the period", f"{status.budget.probes:,}")
m4.metric(
    "Budget runs out",
    "spent"
    if status.exhausted
    else status.exhausts_at.strftime("%Y-%m-%d")
    if status.exhausts_at
    else "not at this pace",
)

left, right = st.columns(2)
days, remaining = slo_view.burn_down(report, index)
left.plotly_chart(
    charts_slo.burn_down_figure(days, remaining, f"Burn-down: {key}"), width="stretch", key="slo-burn-down"
)
windows, rates, factors = slo_view.burn_bars(report, index)
right.plotly_chart(
    charts_slo.burn_rate_figure(windows, rates, factors, "Burn rates"), width="stretch", key="slo-burn-rates"
)

st.subheader("Every scope")
st.dataframe(slo_view.scope_rows(report), hide_index=True, width="stretch")
