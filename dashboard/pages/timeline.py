"""Degradation timeline: when did each provider, region and model degrade, and for how long."""

from __future__ import annotations

from datetime import timedelta

import streamlit as st

from dashboard import charts, data, status, ui, urlstate
from dashboard.charts_status import OFFICIAL, OFFICIAL_LANE, ROUTE_CHANGE
from dashboard.status import Period
from monitor import fmt

ui.header(
    "Degradation timeline",
    "Per provider, one lane per region and model: orange is degraded (availability under 95% or typical TTFT "
    "1.5x its baseline), red is down (under 50%), purple is an alert from firing to resolved, teal a route "
    "change (who answered changed) until the new route is accepted, dark blue the provider's own incident "
    "(its status page).",
)
targets = ui.require_targets()
providers = sorted({t.provider for t in targets})
c1, c2, c3 = st.columns([3, 3, 2])
chosen = urlstate.bound(
    c1.multiselect, "Providers", providers, name="provider", key="timeline-providers", default=providers,
    placeholder="all",
)  # fmt: skip
with c2:
    range_label, span = ui.range_picker("timeline-range", default="24 h")
only_incidents = urlstate.bound(c3.toggle, "Only lanes with incidents", name="only", key="timeline-only", default=True)
now = data.now()
start = now - span
period = timedelta(hours=1) if span >= timedelta(days=1) else timedelta(minutes=5 if span <= timedelta(hours=6) else 15)
grid = ui.load(data.period_grid, None, start, now, period)
alerts = ui.load(data.alerts_between, start, now)
official = ui.load(data.official_between, start, now)
by_id = {t.id: t for t in targets}
codes = status.state_codes(grid.measured, grid.failed, grid.latency_ratio())
if not grid.targets:
    st.info(f"No samples in the last {range_label}.", icon=":material/info:")
    st.stop()

shown = 0
for provider in chosen or providers:
    lane_of = {
        tid: f"{by_id[tid].region} · {by_id[tid].model}"
        for tid in grid.targets
        if tid in by_id and by_id[tid].provider == provider
    }
    periods = status.lane_periods(list(grid.targets), lane_of, list(grid.period_starts), period, codes)
    bars = [p for runs in periods.values() for p in runs]
    for a in alerts:
        if a.provider != provider:
            continue
        lane = f"{a.region or 'all regions'} · {a.model or 'all models'}"
        if a.is_change:  # a route change: its own colour, old → new in the hover
            bars.append(Period(lane, ROUTE_CHANGE, max(a.begins_at, start), a.resolved_at or now, a.change_text))
            continue
        detail = f"{a.rule} ({a.metric} worst {fmt.metric(a.metric, a.worst_value)}, baseline {fmt.metric(a.metric, a.baseline)})"
        bars.append(Period(lane, f"alert: {a.severity}", max(a.begins_at, start), a.resolved_at or now, detail))
    for o in official:  # beside ours: what the provider's own status page said, and when
        if o.provider == provider:
            detail = f"{o.name} ({o.impact or 'no impact given'}, {o.status})"
            bars.append(Period(OFFICIAL_LANE, OFFICIAL, max(o.started_at, start), o.resolved_at or now, detail))
    lanes = sorted({p.lane for p in bars} if only_incidents else set(lane_of.values()) | {p.lane for p in bars})
    if not lanes:
        continue
    shown += 1
    hours = sum((p.end - p.start).total_seconds() for p in bars if p.state in (status.DOWN, status.DEGRADED)) / 3600
    st.subheader(f"{provider}")
    st.caption(f"{len(bars)} periods, {hours:.1f} lane-hours degraded or down in the last {range_label}")
    st.plotly_chart(charts.timeline_gantt(bars, lanes, start, now), width="stretch", key=f"timeline-{provider}")
if not shown:
    st.success(f"No degraded or down period and no alert in the last {range_label}.", icon=":material/check_circle:")
