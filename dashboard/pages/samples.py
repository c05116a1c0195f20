"""Samples: one target's raw probes, filtered by outcome and error kind, downloadable as CSV."""

from __future__ import annotations

import streamlit as st

from dashboard import charts, data, ui
from monitor.storage.queries.sampleviews import OUTCOMES, backtest_csv, full_csv

METRICS = ("ttft_ms", "ttft_answer_ms", "total_ms", "tps")


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


LIMIT = 5_000

ui.header("Samples", f"The raw probes of one target (the newest {LIMIT:,} in the range), as stored.")
targets = ui.require_targets()
ids = [t.id for t in targets]
c1, c2 = st.columns([3, 2])
target = c1.selectbox("Target", ids, key="samples-target")
with c2:
    range_label, span = ui.range_picker("samples-range", default="24 h", options=("1 h", "6 h", "24 h", "7 d", "30 d"))
now = data.now()
start = now - span
c3, c4, c5 = st.columns(3)
outcome = c3.segmented_control("Outcome", OUTCOMES, default="all", key="samples-outcome") or "all"
kinds = c4.multiselect(
    "Error kind", ui.load(data.error_kinds, target, start, now), key="samples-kinds", placeholder="any"
)
metric = c5.selectbox("Metric", METRICS, key="samples-metric")
rows = ui.load(data.samples, target, start, now, outcome, tuple(kinds), LIMIT)
if not rows:
    st.info(f"No samples of `{target}` match these filters in the last {range_label}.", icon=":material/info:")
    st.stop()

failed = sum(not s.ok for s in rows)
st.caption(
    f"{len(rows):,} samples · {failed:,} failed · {rows[0].started_at:%Y-%m-%d %H:%M} → {rows[-1].started_at:%H:%M} UTC"
)
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
st.dataframe(
    [
        {
            "started (UTC)": s.started_at.strftime("%Y-%m-%d %H:%M:%S"),
            "agent": s.agent,
            "outcome": "ok" if s.ok else s.error_kind,
            "TTFT (ms)": _r(s.ttft_ms),
            "answer TTFT (ms)": _r(s.ttft_answer_ms),
            "total (ms)": _r(s.total_ms),
            "output tokens": s.output_tokens,
            "TPS (tok/s)": _r(s.tps),
            "HTTP": s.http_status,
            # Route truth: who answered, which build, and whether the response says it fell back.
            "served by": s.served_by or "",
            "fingerprint": s.system_fingerprint or "",
            "fallback": "" if s.fallback is None else ("yes" if s.fallback else "no"),
            "error": s.error_message or "",
        }
        for s in reversed(rows)
    ],
    hide_index=True,
    width="stretch",
)
