"""Provider health: the page product managers read, and share (no sign-in needed)."""

from __future__ import annotations

import streamlit as st

from dashboard import charts, data, health_view, slo_view, status, ui, urlstate
from monitor.http.public import status_links

ui.header(
    "Provider health",
    "Current status, 90 days of daily availability (amber-brown: available but slow against its own baseline), "
    "uptime and incidents, per provider. This page is read-only and needs no sign-in: share its link.",
)
st.caption(
    "Counted as the public status page counts them: a minute is down only where a quorum of the vantage points "
    "probing the model (more than half of them, at least 2 when 2 or more do) saw it fail, so one agent's network "
    "never colours a bar; incidents are the alerts the quorum confirmed (an agent's own vantage alerts are on the "
    "Alerts page)."
)
targets = ui.require_targets()
refs = {t.id: t for t in targets}
providers = sorted({t.provider for t in targets})
now = data.now()
c1, _ = st.columns([2, 5])
provider = urlstate.bound(c1.selectbox, "Provider", providers, name="provider", key="health-provider",
                          default=providers[0])  # fmt: skip
hd = ui.load(data.health_data, now, provider)
states = health_view.current_states(hd.current)
statuses = health_view.provider_statuses(states, refs, [a for a in hd.incidents if a.state == "firing"])

cols = st.columns(min(len(providers), 5) or 1)
for i, p in enumerate(providers):
    color = status.PROVIDER_STATUS_COLORS[statuses[p]]
    cols[i % len(cols)].markdown(
        f"<div style='border-left:6px solid {color};padding:4px 10px;margin-bottom:8px'>"
        f"<b>{p}</b><br><span style='color:{color}'>● {statuses[p]}</span></div>",
        unsafe_allow_html=True,
    )

lanes = health_view.lanes_for(hd.daily, refs, provider)
st.header(f"{provider}: {statuses[provider]}")
if not lanes:
    st.info(f"No samples from {provider} in the last {data.HEALTH_DAYS} days.", icon=":material/info:")
    st.stop()

st.subheader("Uptime")
st.dataframe(health_view.uptime_rows(hd.daily, lanes, data.UPTIME_WINDOWS), hide_index=True, width="stretch")
st.subheader(f"Last {data.HEALTH_DAYS} days")
colors, hover = health_view.daily_bars(hd.daily, lanes)
st.plotly_chart(
    charts.health_bars([lane.name for lane in lanes], list(hd.daily.period_starts), colors, hover),
    width="stretch",
    key="health-bars",
)
legend = (
    " ".join(f"<span style='color:{c}'>■</span> {label}" for _, label, c in status.DAY_STEPS)
    + f" <span style='color:{status.SLOW_DAY_COLOR}'>■</span> slow <span style='color:#c9ccd1'>■</span> no data"
)
st.markdown(legend, unsafe_allow_html=True)

months = ui.load(data.slo_months, now, provider)
if months:
    st.subheader("SLO attainment per calendar month")
    st.caption("Share of good probes against each objective (✓ met, ✗ missed); the current month so far.")
    st.dataframe(slo_view.month_rows(months), hide_index=True, width="stretch")

st.subheader("Incident history")
incidents = health_view.incident_rows(hd.incidents, provider)
if incidents:
    st.dataframe(incidents, hide_index=True, width="stretch")
else:
    st.success(
        f"No incident recorded for {provider} in the last {data.HEALTH_DAYS} days.", icon=":material/check_circle:"
    )

base = (data.settings().dashboard_url or "").rstrip("/")
st.caption("Share this page (read-only, no sign-in):")
st.code(f"{base or 'http://<dashboard-host>:8501'}/health?provider={provider}", language=None)

conf = data.settings()
st.subheader("Public status page")
public = status_links(conf.dashboard_url, site_url=conf.status_site_url)
if conf.status_site_url:
    st.markdown(f"The public status page, with the same figures: [{conf.status_site_url}]({conf.status_site_url})")
elif public:
    st.markdown(f"The public status page, with the same figures, served by `firsttoken run --listen`: "
                f"[{public}/status/{provider}]({public}/status/{provider})")  # fmt: skip
else:
    st.info(
        "No public status page is known. `firsttoken run --listen HOST:PORT` serves one at /status (and "
        "/status/<provider>); `firsttoken status export DIR` writes it as static files. Set `status_site.url` "
        "in the config (or FIRSTTOKEN_STATUS_URL) to where readers find it, and this page links to it.",
        icon=":material/info:",
    )
if public:
    st.caption("Embed provider health elsewhere (served by `firsttoken run`, read-only):")
    st.markdown(
        f"![{provider} status]({public}/badge/{provider}.svg) · "
        f"[status.json]({public}/status.json) (Statuspage v2 format) · "
        f"[incidents feed]({public}/incidents.atom) (Atom)"
    )
    st.code(f"![{provider}]({public}/badge/{provider}.svg)", language="markdown")
