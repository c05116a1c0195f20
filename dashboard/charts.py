"""Pure Plotly figure builders: plain values in, `go.Figure` out (no Streamlit, no database).

Status figures (overview grid, timeline, health bars) live in `charts_status`
and are re-exported here, so pages import one module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.charts_status import ROUTE_CHANGE_COLOR, health_bars, overview_grid, timeline_gantt
from dashboard.charts_target import error_kinds_figure
from dashboard.palette import NEUTRAL, SEVERITY_COLORS, provider_colors, rgba, series_colors
from monitor.storage.queries.alertviews import AlertView
from monitor.storage.queries.compare import ModelStats
from monitor.storage.queries.trends import Bands, Trend

__all__ = [
    "compare_bars",
    "error_kinds_figure",
    "health_bars",
    "merge_alert_spans",
    "overview_grid",
    "samples_scatter",
    "timeline_gantt",
    "trend_figure",
    "ttft_vs_prompt",
    "ttft_vs_tps",
]
FONT = dict(family="Inter, Segoe UI, Helvetica, Arial, sans-serif", size=13, color="#262730")
MARKED_COLOR = "#6b2fb3"


# The legend sits right of the plot, top-aligned, and Plotly widens the right margin to fit it.
# Above the plot it wrapped into the title (and the subplot titles) as soon as the lines
# outnumbered one row; below it, a shrinking plot pulled it onto the x axis title at 1024 px.
LEGEND_RIGHT = dict(orientation="v", yanchor="top", y=1, xanchor="left", x=1.02)


def base_layout(fig: go.Figure, title: str | None = None, height: int = 420) -> go.Figure:
    top_px = 50 if title else 30
    fig.update_layout(
        template="plotly_white",
        font=FONT,
        title=dict(text=title, x=0, xanchor="left", font=dict(size=16)) if title else None,
        height=height,
        margin=dict(l=10, r=10, t=top_px, b=10),
        legend=LEGEND_RIGHT,
        hoverlabel=dict(font_size=12),
    )
    return fig


def _arr(values) -> np.ndarray:
    """Floats with NaN for None: Plotly validates numpy arrays in one step, lists value by value."""
    return np.array(values, dtype=float)


def _band(x, low, high, color, alpha, group) -> go.Scatter:
    """One closed polygon per band (forward along the top, back along the bottom): half the traces
    of the usual two-trace `tonexty` fill, and Plotly's cost is per trace. Empty buckets are skipped."""
    keep = ~(np.isnan(low) | np.isnan(high))
    xs, lo, hi = x[keep], low[keep], high[keep]
    return go.Scatter(
        x=np.concatenate([xs, xs[::-1]]),
        y=np.concatenate([hi, lo[::-1]]),
        fill="toself",
        fillcolor=rgba(color, alpha),
        mode="lines",
        line=dict(width=0),
        hoverinfo="skip",
        showlegend=False,
        legendgroup=group,
    )


def _metric(x, bands: Bands, color: str, label: str, unit: str, legend: bool) -> list[go.Scatter]:
    p01, p10, p50, p90, p99 = (_arr(v) for v in (bands.p01, bands.p10, bands.p50, bands.p90, bands.p99))
    median = go.Scatter(
        x=x,
        y=p50,
        mode="lines",
        line=dict(color=color, width=2),
        name=label,
        legendgroup=label,
        showlegend=legend,
        customdata=np.column_stack([p10, p90, p01, p99]),
        hovertemplate=(
            f"<b>{label}</b><br>%{{x}}<br>p50 %{{y:,.0f}} {unit}<br>p10–p90 %{{customdata[0]:,.0f}}–"
            f"%{{customdata[1]:,.0f}}<br>p1–p99 %{{customdata[2]:,.0f}}–%{{customdata[3]:,.0f}}<extra></extra>"
        ),
    )
    return [_band(x, p01, p99, color, 0.12, label), _band(x, p10, p90, color, 0.28, label), median]


def merge_alert_spans(alerts: Sequence[AlertView], now: datetime) -> list[tuple[str, str, datetime, datetime]]:
    """(rule, severity, begin, end) with overlapping alerts of one rule merged: twenty targets of a
    provider firing together are one shaded span, not twenty stacked ones."""
    spans: dict[tuple[str, str], list[list[datetime]]] = {}
    for a in sorted(alerts, key=lambda a: a.begins_at):
        runs = spans.setdefault((a.rule, a.severity), [])
        end = a.resolved_at or now
        if runs and a.begins_at <= runs[-1][1]:
            runs[-1][1] = max(runs[-1][1], end)
        else:
            runs.append([a.begins_at, end])
    return sorted(((r, sev, b, e) for (r, sev), rs in spans.items() for b, e in rs), key=lambda x: x[2])


def _naive_utc(moment: datetime) -> datetime:
    """As the traces' x values are: UTC, without the zone."""
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


def trend_figure(
    trend: Trend,
    alerts: Sequence[AlertView] = (),
    now: datetime | None = None,
    log_y: bool = False,
    marked: AlertView | None = None,
) -> go.Figure:
    """TTFT and TPS bands (median line in p10–p90 and p1–p99) over an error-rate strip."""
    fig = make_subplots(
        rows=3,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.06,
        row_heights=[0.45, 0.35, 0.2],
        subplot_titles=("Time to first token (ms)", "Decode speed (tokens/s)", "Error rate (%)"),
    )
    colors = series_colors([(s.label, s.provider) for s in trend.series], [])
    traces, rows = [], []
    for s in trend.series:
        x = np.array([t.replace(tzinfo=None) for t in s.bucket_starts], dtype="datetime64[ms]")
        ttft = _metric(x, s.ttft_ms, colors[s.label], s.label, "ms", True)
        tps = _metric(x, s.tps, colors[s.label], s.label, "tok/s", False)
        errors = go.Bar(
            x=x,
            y=_arr([None if r is None else 100 * r for r in s.error_rate]),
            marker_color=colors[s.label],
            name=s.label,
            legendgroup=s.label,
            showlegend=False,
            customdata=np.column_stack([s.failed, s.measured]),
            hovertemplate=f"<b>{s.label}</b><br>%{{x}}<br>%{{y:.1f}}% (%{{customdata[0]}} of "
            "%{customdata[1]} probes)<extra></extra>",
        )
        traces += [*ttft, *tps, errors]
        rows += [1] * len(ttft) + [2] * len(tps) + [3]
    fig.add_traces(traces, rows=rows, cols=[1] * len(rows))
    shapes, notes = [], []
    changes = [a for a in alerts if a.is_change]
    for a in changes:  # route changes: a marker where the new route took over, old → new beside it
        common = dict(xref="x", yref="paper", x0=a.begins_at, x1=a.begins_at, y0=0, y1=1, layer="below")
        shapes.append(dict(type="line", line=dict(color=ROUTE_CHANGE_COLOR, width=1.5, dash="dash"), **common))
        notes.append(dict(x=a.begins_at, y=0.98, xref="x", yref="paper", text=f"⇄ {a.change_text}",
                          showarrow=False, xanchor="left", yanchor="top",
                          font=dict(size=11, color=ROUTE_CHANGE_COLOR)))  # fmt: skip
    alerts = [a for a in alerts if not a.is_change]
    for rule, severity, begin, end in merge_alert_spans(alerts, now or trend.end):
        color = SEVERITY_COLORS.get(severity, NEUTRAL)
        common = dict(xref="x", yref="paper", x0=begin, y0=0, y1=1, layer="below")
        shapes.append(dict(type="rect", x1=end, fillcolor=color, opacity=0.10, line_width=0, **common))
        shapes.append(dict(type="line", x1=begin, line=dict(color=color, width=1, dash="dot"), **common))
        notes.append(dict(x=begin, y=1.0, xref="x", yref="paper", text=f"▲ {rule}", showarrow=False, xanchor="left",
                          yanchor="top", font=dict(size=11, color=color)))  # fmt: skip
    if marked is not None:  # the alert a link points at: outlined over its whole life, named
        begin, end = max(marked.begins_at, trend.start), marked.resolved_at or now or trend.end
        shapes.append(
            dict(
                type="rect",
                xref="x",
                yref="paper",
                x0=begin,
                x1=end,
                y0=0,
                y1=1,
                layer="above",
                fillcolor="rgba(0,0,0,0)",
                line=dict(color=MARKED_COLOR, width=2),
                name="marked-alert",
            )
        )
        notes = [dict(x=begin, y=1.0, xref="x", yref="paper", text=f"▼ alert #{marked.id}: {marked.rule}",
                      showarrow=False, xanchor="left", yanchor="top", name="marked-alert",
                      font=dict(size=12, color=MARKED_COLOR)), *notes[:11]]  # fmt: skip
    fig.update_layout(shapes=shapes, annotations=[*fig.layout.annotations, *notes[:12]])
    if marked is not None:
        # A fresh alert (a webhook's link opened at once) begins after the last drawn bin: the axis,
        # sized to the data, would end before it, and Plotly drops a label whose x is off the axis.
        # So the axis reaches past the alert's span, with room for its label.
        last = max(end, trend.end)
        room = (last - trend.start) * 0.05
        fig.update_xaxes(range=[_naive_utc(trend.start), _naive_utc(last + room)])
    # Zoom to the p90s: a 15x spike in p99 would otherwise flatten every median (hover still shows p99).
    top = max((v for s in trend.series for v in s.ttft_ms.p90 if v is not None), default=None)
    if top and not log_y:
        fig.update_yaxes(range=[0, top * 1.25], row=1, col=1)
    if log_y:
        fig.update_yaxes(type="log", row=1, col=1)
    fig.update_yaxes(title_text="ms", rangemode="normal" if log_y else "tozero", row=1, col=1)
    fig.update_yaxes(title_text="tokens/s", rangemode="tozero", row=2, col=1)
    fig.update_yaxes(title_text="%", rangemode="tozero", row=3, col=1)
    fig.update_xaxes(range=[trend.start, trend.end], title_text="time (UTC)", row=3, col=1)
    fig.update_layout(barmode="group", bargap=0.15)
    return base_layout(fig, None, height=720)


def _model_label(s: ModelStats) -> str:
    return f"{s.provider}/{s.model}"


def compare_bars(stats: Sequence[ModelStats], cost_per_1k: Mapping[str, float | None]) -> go.Figure:
    """Side by side on one prompt: p50 (bar) and p90 (marker) TTFT, TPS, error rate, cost per 1k probes."""
    stats = sorted(stats, key=lambda s: (s.ttft_p50_ms is None, s.ttft_p50_ms or 0))
    labels = [_model_label(s) for s in stats]
    colors = provider_colors(s.provider for s in stats)
    bar_colors = [colors[s.provider] for s in stats]
    costs = [cost_per_1k.get(_model_label(s)) for s in stats]
    priced = any(c is not None for c in costs)  # no prices configured: no empty cost panel
    titles = ["TTFT p50 ▮ p90 ◆", "TPS p50", "Errors"]  # short: four side by side fit at 1024 px
    fig = make_subplots(
        rows=1,
        cols=4 if priced else 3,
        shared_yaxes=True,
        horizontal_spacing=0.04,
        column_widths=[0.34, 0.26, 0.2, 0.2] if priced else [0.4, 0.35, 0.25],
        subplot_titles=[*titles, "Cost / 1k probes"] if priced else titles,
    )
    fig.add_trace(go.Bar(y=labels, x=[s.ttft_p50_ms for s in stats], orientation="h", marker_color=bar_colors,
                         name="TTFT p50", hovertemplate="%{y}: p50 %{x:,.0f} ms<extra></extra>"), row=1, col=1)  # fmt: skip
    fig.add_trace(go.Scatter(y=labels, x=[s.ttft_p90_ms for s in stats], mode="markers", name="TTFT p90",
                             marker=dict(symbol="diamond", color="#262730", size=8),
                             hovertemplate="%{y}: p90 %{x:,.0f} ms<extra></extra>"), row=1, col=1)  # fmt: skip
    fig.add_trace(go.Bar(y=labels, x=[s.tps_p50 for s in stats], orientation="h", marker_color=bar_colors,
                         name="TPS p50", hovertemplate="%{y}: %{x:,.0f} tokens/s<extra></extra>"), row=1, col=2)  # fmt: skip
    errors = [None if s.error_rate is None else 100 * s.error_rate for s in stats]
    fig.add_trace(go.Bar(y=labels, x=errors, orientation="h", marker_color=bar_colors, name="error rate",
                         hovertemplate="%{y}: %{x:.2f}%<extra></extra>"), row=1, col=3)  # fmt: skip
    if priced:
        fig.add_trace(go.Bar(y=labels, x=costs, orientation="h", marker_color=bar_colors, name="cost",
                             hovertemplate="%{y}: $%{x:.3f} per 1k probes<extra></extra>"), row=1, col=4)  # fmt: skip
    fig.update_layout(showlegend=False)
    fig.update_yaxes(autorange="reversed")
    for col, unit in enumerate(("ms", "tokens/s", "%", "USD")[: 4 if priced else 3], start=1):
        fig.update_xaxes(title_text=unit, rangemode="tozero", row=1, col=col)
    fig.update_annotations(font_size=13)
    return base_layout(fig, None, height=max(280, 90 + 24 * len(stats)))


def ttft_vs_prompt(stats: Sequence[ModelStats]) -> go.Figure:
    """Median TTFT against the prompt's input tokens, one line per model (short vs long prompt)."""
    fig = go.Figure()
    colors = provider_colors(s.provider for s in stats)
    by_model: dict[str, list[ModelStats]] = {}
    for s in stats:
        by_model.setdefault(_model_label(s), []).append(s)
    for label, rows in sorted(by_model.items()):
        rows = sorted((r for r in rows if r.input_tokens_mean), key=lambda r: r.input_tokens_mean or 0)
        fig.add_trace(
            go.Scatter(
                x=[r.input_tokens_mean for r in rows],
                y=[r.ttft_p50_ms for r in rows],
                mode="lines+markers",
                name=label,
                line=dict(color=colors[rows[0].provider] if rows else NEUTRAL),
                text=[r.prompt for r in rows],
                hovertemplate=f"<b>{label}</b><br>prompt %{{text}}: %{{x:,.0f}} input tokens<br>"
                "TTFT p50 %{y:,.0f} ms<extra></extra>",
            )
        )
    fig.update_xaxes(title_text="prompt length (input tokens)", type="log")
    fig.update_yaxes(title_text="TTFT p50 (ms)", rangemode="tozero")
    return base_layout(fig, "TTFT vs prompt length", height=420)


def ttft_vs_tps(stats: Sequence[ModelStats]) -> go.Figure:
    """Each model on one prompt as a point: right is faster decoding, low is faster first token."""
    fig = go.Figure()
    colors = provider_colors(s.provider for s in stats)
    for provider in sorted({s.provider for s in stats}):
        rows = [s for s in stats if s.provider == provider and s.ttft_p50_ms is not None and s.tps_p50 is not None]
        fig.add_trace(
            go.Scatter(
                x=[s.tps_p50 for s in rows],
                y=[s.ttft_p50_ms for s in rows],
                error_y=dict(
                    type="data",
                    symmetric=False,
                    array=[(s.ttft_p90_ms or 0) - (s.ttft_p50_ms or 0) for s in rows],
                    arrayminus=[(s.ttft_p50_ms or 0) - (s.ttft_p10_ms or 0) for s in rows],
                    color=rgba(colors[provider], 0.4),
                ),
                mode="markers+text",
                text=[s.model for s in rows],
                textposition="top center",
                marker=dict(size=11, color=colors[provider]),
                name=provider,
                hovertemplate="<b>%{text}</b><br>%{x:,.0f} tokens/s<br>TTFT p50 %{y:,.0f} ms<extra></extra>",
            )
        )
    fig.update_xaxes(title_text="decode speed p50 (tokens/s)", rangemode="tozero")
    fig.update_yaxes(title_text="TTFT p50 (ms), whiskers p10–p90", rangemode="tozero")
    return base_layout(fig, "TTFT vs decode speed", height=460)


def samples_scatter(
    times: Sequence[datetime], values: Sequence[float | None], ok: Sequence[bool], metric: str
) -> go.Figure:
    """One target's raw samples; failures as red crosses on the time axis."""
    unit = "tokens/s" if metric == "tps" else "ms"
    fig = go.Figure()
    good = [(t, v) for t, v, k in zip(times, values, ok, strict=True) if k and v is not None]
    bad = [t for t, k in zip(times, ok, strict=True) if not k]
    fig.add_trace(go.Scatter(x=[t for t, _ in good], y=[v for _, v in good], mode="markers", name="ok",
                             marker=dict(size=5, color="#4c78a8", opacity=0.7),
                             hovertemplate=f"%{{x}}<br>%{{y:,.1f}} {unit}<extra></extra>"))  # fmt: skip
    fig.add_trace(go.Scatter(x=bad, y=[0] * len(bad), mode="markers", name="failed",
                             marker=dict(symbol="x", size=8, color="#d64545"),
                             hovertemplate="%{x}<br>failed<extra></extra>"))  # fmt: skip
    fig.update_yaxes(title_text=f"{metric} ({unit})", rangemode="tozero")
    fig.update_xaxes(title_text="time (UTC)")
    return base_layout(fig, None, height=360)
