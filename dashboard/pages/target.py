"""Target: one target's TTFT and TPS bands, its errors by kind, its alerts, latest samples and settings.

Alert links land here (`?target=&from=&to=&alert=`); so do Overview cells, Alerts rows and Samples rows.
"""

from __future__ import annotations

import streamlit as st

from dashboard import alert_rows, cache_view, charts, data, ui, urlstate
from monitor import fmt

LATEST = 50

ui.header("Target", "One target over time: its percentile bands, errors by kind, alerts, latest probes and settings.")
targets = ui.require_targets()
ids = [t.id for t in targets]
target = urlstate.bound(st.selectbox, "Target", ids, name="target", key="target-id", default=ids[0])
ref = next(t for t in targets if t.id == target)
now = data.now()
win = ui.window_picker("target-range", now, default="24 h")
marked_id = urlstate.integer("alert")
marked = ui.load(data.alert, marked_id) if marked_id is not None else None

if marked is not None:  # the alert a link points at, in words; the charts outline it
    with st.container(border=True, key="marked-alert"):
        where = "this target" if marked.scope_key == target else marked.scope_key
        state = marked.state if marked.state != "resolved" else f"resolved {marked.resolved_at:%Y-%m-%d %H:%M} UTC"
        values = (
            f"fired at **{fmt.metric(marked.metric, marked.fired_value)}**, worst "
            f"**{fmt.metric(marked.metric, marked.worst_value)}**, {alert_rows.reference(marked)} "
            f"{fmt.metric(marked.metric, marked.baseline)}"
        )
        now_or_end = "resolved at" if marked.state == "resolved" else "now"
        st.markdown(
            f":violet[**▼ Alert #{marked.id}: {marked.rule}**] ({marked.severity}, {state}) on {where} — "
            f"{marked.metric} {values}, {now_or_end} {fmt.metric(marked.metric, marked.value)}; "
            f"started {marked.begins_at:%Y-%m-%d %H:%M} UTC, for {fmt.span(marked.duration_s(now))}."
        )

        if marked.attribution:  # "is it them or us" (DESIGN §11)
            st.markdown(alert_rows.attribution_text(marked))

per_agent = urlstate.bound(st.toggle, "One line per vantage point", name="agents", key="target-agents", default=False)
trend = ui.load(data.trend, (target,), win.start, win.end, "target")
drawn = ui.load(data.trend, (target,), win.start, win.end, "agent") if per_agent else trend
alerts = [
    a
    for a in ui.load(data.alerts_between, win.start, win.end, False)
    if a.covers(ref.provider, ref.model, ref.region, ref.prompt)
]
if marked is not None and all(a.id != marked.id for a in alerts):
    alerts.insert(0, marked)
series = trend.series[0] if trend.series else None
if series is None or not sum(series.measured):
    st.info(f"No samples of `{target}` in {win.label}.", icon=":material/info:")
else:
    st.plotly_chart(
        charts.trend_figure(drawn, [a for a in alerts if a.fired_at], win.end, marked=marked),
        width="stretch",
        key="target-trend",
    )
    measured, failed = sum(series.measured), sum(series.failed)
    st.caption(
        f"{fmt.count(measured)} probes · {fmt.count(failed)} failed ({fmt.pct(failed / measured)}) · "
        f"{win.label}" + ("" if win.fixed else " up to now")
    )
    st.subheader("Errors by kind")
    failures = ui.load(data.failures, target, win.start, win.end)
    if failures:
        st.plotly_chart(
            charts.error_kinds_figure(
                series.bucket_starts, trend.bucket, series.measured, failures, win.start, win.end
            ),
            width="stretch",
            key="target-errors",
        )
    else:
        st.caption("No failed probe in this window.")

cached = ui.load(data.cache_figures, (target,), win.start, win.end)
if cached:  # a cache probe (DESIGN §13): cold and warm apart, and what the cache saves
    st.subheader("Prompt cache")
    st.dataframe(cache_view.cache_rows(cached, data.settings().full_prices), hide_index=True, width="stretch")
    st.caption(cache_view.CAPTION)

split = [a for a in alerts if a.attribution]
if split:
    st.subheader("Is it them or us")
    st.caption(
        "Each latency alert's change split into the network path (time to response headers, less the "
        "provider's own processing time where it reports it) and the provider (the rest of the TTFT)."
    )
    st.dataframe(alert_rows.attribution_rows(split), hide_index=True, width="stretch")

st.subheader("Alerts")
# Every kind of alert on this target or a scope that holds it (a provider-region alert, a route change ...).
if alerts:
    alerts.sort(key=lambda a: (a.id != marked_id, -a.begins_at.timestamp()))
    st.dataframe(alert_rows.rows(alerts, now), hide_index=True, width="stretch", column_config=alert_rows.link_column())
else:
    st.caption("No alert on this target in this window.")

st.subheader("Latest samples")
latest = ui.load(data.samples, target, win.start, win.end, "all", (), LATEST)
if latest:
    st.dataframe(
        [
            {
                "started (UTC)": s.started_at.strftime("%Y-%m-%d %H:%M:%S"),
                "outcome": "ok" if s.ok else s.error_kind,
                "TTFT": fmt.ms(s.ttft_ms),
                "total": fmt.ms(s.total_ms),
                "TPS": fmt.tok_s(s.tps),
                "output tokens": fmt.count(s.output_tokens),
                "HTTP": s.http_status,
                "agent": s.agent,
                "error": s.error_message or "",
            }
            for s in reversed(latest)
        ],
        hide_index=True,
        width="stretch",
    )
    st.page_link(
        "pages/samples.py",
        label="Every sample of this target, with filters and CSV",
        icon=":material/table_rows:",
        query_params={"target": target},
    )
else:
    st.caption("No sample in this window.")

st.subheader("Settings")
conf = data.settings().targets.get(target)
if conf is None:
    st.caption("This target is not in the dashboard's config file (or none is configured): settings unknown.")
else:
    c1, c2 = st.columns(2)
    c1.table(
        [
            {"setting": "protocol", "value": conf.protocol},
            {"setting": "endpoint", "value": conf.endpoint},
            {"setting": "interval", "value": fmt.span(conf.interval_s)},
            {"setting": "timeout", "value": fmt.span(conf.timeout_s)},
            {"setting": "TTFT timeout", "value": fmt.span(conf.ttft_timeout_s)},
            {"setting": "prompt", "value": f"{conf.prompt} (max {fmt.count(conf.max_tokens)} tokens)"},
            {"setting": "agents", "value": ", ".join(conf.agents) or "every agent"},
        ],
        hide_index=True,
    )
    for role, text in conf.messages:  # as configured (code blocks: a prompt is not markdown)
        c2.caption(role)
        c2.code(text, language=None, wrap_lines=True)
