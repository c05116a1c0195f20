"""Samples: one target's raw probes, filtered by outcome and error kind, downloadable as CSV."""

from __future__ import annotations

from datetime import timedelta

import streamlit as st

from dashboard import charts, data, ui, urlstate
from monitor import fmt
from monitor.sample import SAMPLE_METRICS, outcome_label
from monitor.storage.queries.sampleviews import OUTCOMES, backtest_csv, full_csv

METRICS = SAMPLE_METRICS


LIMIT = 5_000
AROUND = timedelta(minutes=30)  # a selected probe opens the target page this long either side of it

ui.header("Samples", f"The raw probes of one target (the newest {LIMIT:,} in the range), as stored.")
targets = ui.require_targets()
ids = [t.id for t in targets]
c1, c2 = st.columns([3, 2])
target = urlstate.bound(c1.selectbox, "Target", ids, name="target", key="samples-target", default=ids[0])
with c2:
    range_label, span = ui.range_picker("samples-range", default="24 h", options=("1 h", "6 h", "24 h", "7 d", "30 d"))
now = data.now()
start = now - span
c3, c4, c5 = st.columns(3)
outcome = urlstate.bound(c3.segmented_control, "Outcome", OUTCOMES, name="outcome", key="samples-outcome",
                         default="all") or "all"  # fmt: skip
kinds = urlstate.bound(
    c4.multiselect, "Error kind", ui.load(data.error_kinds, target, start, now), name="kind", key="samples-kinds",
    default=[], placeholder="any",
)  # fmt: skip
metric = urlstate.bound(c5.selectbox, "Metric", METRICS, name="metric", key="samples-metric", default=METRICS[0])
rows = ui.load(data.samples, target, start, now, outcome, tuple(kinds), LIMIT)
if not rows:
    st.info(f"No samples of `{target}` match these filters in the last {range_label}.", icon=":material/info:")
    st.stop()

failed = sum(not s.ok for s in rows)
st.caption(
    f"{len(rows):,} samples · {failed:,} failed · {rows[0].started_at:%Y-%m-%d %H:%M} → {rows[-1].started_at:%H:%M} UTC"
)
st.page_link("pages/target.py", label=f"Target page of {target}", icon=":material/my_location:",
             query_params={"target": target})  # fmt: skip
st.plotly_chart(
    charts.samples_scatter(
        [s.started_at for s in rows], [getattr(s, metric) for s in rows], [s.ok for s in rows], metric
    ),
    width="stretch",
    key="samples-scatter",
)
d1, d2 = st.columns(2)
safe = target.replace("/", "_").replace("@", "_").replace(":", "_")
d1.download_button(
    f"{metric} for firsttoken backtest (timestamp,value)",
    backtest_csv(rows, metric),
    file_name=f"{safe}-{metric}.csv",
    mime="text/csv",
    icon=":material/download:",
    help="Failed probes have an empty value; cancelled probes are left out.",
)
d2.download_button(
    "every field (CSV)", full_csv(rows), file_name=f"{safe}-samples.csv", mime="text/csv", icon=":material/download:"
)
newest = list(reversed(rows))
st.caption("Select a row to open the target page around that probe.")
picked = st.dataframe(
    [
        {
            "started (UTC)": s.started_at.strftime("%Y-%m-%d %H:%M:%S"),
            "agent": s.agent,
            "outcome": outcome_label(s),
            "TTFT": fmt.ms(s.ttft_ms),
            "answer TTFT": fmt.ms(s.ttft_answer_ms),
            "total": fmt.ms(s.total_ms),
            "output tokens": fmt.count(s.output_tokens),
            "TPS": fmt.tok_s(s.tps),
            "HTTP": s.http_status,
            # Route truth: who answered, which build, and whether the response says it fell back.
            "served by": s.served_by or "",
            "fingerprint": s.system_fingerprint or "",
            "fallback": "" if s.fallback is None else ("yes" if s.fallback else "no"),
            "error": s.error_message or "",
        }
        for s in newest
    ],
    hide_index=True,
    width="stretch",
    key="samples-table",
    on_select="rerun",
    selection_mode="single-row",
)
if picked.selection.rows:
    at = newest[picked.selection.rows[0]].started_at
    around = {"from": urlstate.format_time(at - AROUND), "to": urlstate.format_time(at + AROUND)}
    st.switch_page("pages/target.py", query_params={"target": target, **around})
