"""Trends: TTFT and decode speed over time as percentile bands, alert markers, error-rate strip."""

from __future__ import annotations

from datetime import timedelta

import streamlit as st

from dashboard import charts, data, ui, urlstate
from monitor.storage.queries.trends import SPLITS

REFRESH = {"off": None, "30 s": timedelta(seconds=30), "1 min": timedelta(minutes=1), "5 min": timedelta(minutes=5)}
MAX_SERIES = 24

ui.header(
    "Trends",
    "Median line inside p10–p90 (dark) and p1–p99 (light) bands per time bucket; shaded spans are alerts. "
    "Failed probes count in the error rate and never in a percentile.",
)
targets = ui.require_targets()
providers = sorted({t.provider for t in targets})
selected = ui.target_filter(targets, "trends", default_providers=providers[:1], max_models=3)
win = ui.window_picker("trends-range", data.now(), default="24 h")  # a row of its own: six segments at 1024 px
c2, c3, c4 = st.columns([2, 2, 2])
split_by = urlstate.bound(c2.selectbox, "One line per", SPLITS, name="split", key="trends-split", default=SPLITS[0])
refresh = urlstate.bound(c3.selectbox, "Auto-refresh", list(REFRESH), name="refresh", key="trends-refresh",
                         default="30 s")  # fmt: skip
log_y = urlstate.bound(c4.toggle, "Log TTFT axis", name="log", key="trends-log", default=False)
marked_id = urlstate.integer("alert")
if not selected:
    st.info("No target matches these filters: widen the provider, model, region or prompt selection.")
    st.stop()
ids = tuple(t.id for t in selected)
if len(ids) == 1:
    st.page_link(
        "pages/target.py", label=f"Open {ids[0]}", icon=":material/my_location:", query_params={"target": ids[0]}
    )
if split_by != "agent" and len({t.label(split_by) for t in selected}) > MAX_SERIES:  # agents: a handful
    st.warning(f"More than {MAX_SERIES} lines would be unreadable: narrow the selection or choose a coarser split.")
    st.stop()


@st.fragment(run_every=None if win.fixed else REFRESH[refresh])
def body() -> None:
    now = data.now()
    start, end = (win.start, win.end) if win.fixed else (now - (win.end - win.start), now)
    trend = ui.load(data.trend, ids, start, end, split_by)
    alerts = [
        a
        for a in ui.load(data.alerts_between, start, end)
        if any(a.covers(t.provider, t.model, t.region, t.prompt) for t in selected)
    ]
    marked = ui.load(data.alert, marked_id) if marked_id is not None else None
    if marked is not None:
        st.markdown(
            f":violet[**▼ Alert #{marked.id}: {marked.rule}**] on {marked.scope_key} ({marked.state}): "
            f"{marked.summary or ''}"
        )
    if not any(sum(s.measured) for s in trend.series):
        st.info(f"No samples for these {len(ids)} targets in {win.label}.", icon=":material/info:")
        return
    figure = charts.trend_figure(trend, alerts, end, log_y, marked=marked)
    st.plotly_chart(figure, width="stretch", key="trend-figure")
    source = "hourly rollups (≤ 2% percentile error)" if trend.source == "rollups" else "raw samples (exact)"
    minutes = int(trend.bucket.total_seconds() // 60)
    bucket = f"{minutes // 60} h" if minutes >= 60 else f"{minutes} min"
    st.caption(
        ("" if log_y else "TTFT axis zoomed to the highest p90; hover for p99. ")
        + f"{len(ids)} targets · {bucket} buckets · from {source} · {len(alerts)} alerts in range · "
        f"updated {now:%H:%M:%S} UTC"
    )


body()
