"""Status figures: the overview grid, the degradation timeline and the daily health bars (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import plotly.graph_objects as go

from dashboard.status import DEGRADED, DOWN, STATE_COLORS, STATES, Period

FONT = dict(family="Inter, Segoe UI, Helvetica, Arial, sans-serif", size=13, color="#262730")
ALERT_COLORS = {"page": "#8e44ad", "ticket": "#b07cc6"}


def _layout(fig: go.Figure, height: int, title: str | None = None) -> go.Figure:
    fig.update_layout(
        template="plotly_white",
        font=FONT,
        height=height,
        title=dict(text=title, x=0, xanchor="left", font=dict(size=16)) if title else None,
        margin=dict(l=10, r=10, t=50 if title else 20, b=10),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0),
    )
    return fig


def _discrete_scale(colors: Sequence[str]) -> list[list]:
    n = len(colors)
    scale = []
    for i, color in enumerate(colors):
        scale += [[i / n, color], [(i + 1) / n, color]]
    return scale


@dataclass(frozen=True)
class GridCell:
    row: str  # provider/model
    column: str  # region
    state: str
    text: str  # shown in the cell, e.g. "412 ms"
    hover: str


def overview_grid(cells: Sequence[GridCell]) -> go.Figure:
    """Provider/model × region, coloured by state, the median TTFT written in each cell."""
    rows = sorted({c.row for c in cells})
    cols = sorted({c.column for c in cells})
    index = {state: i for i, state in enumerate(STATES)}
    z = [[None] * len(cols) for _ in rows]
    text = [[""] * len(cols) for _ in rows]
    hover = [["not probed"] * len(cols) for _ in rows]
    for c in cells:
        i, j = rows.index(c.row), cols.index(c.column)
        z[i][j], text[i][j], hover[i][j] = index[c.state], c.text, c.hover
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=cols,
            y=rows,
            text=text,
            texttemplate="%{text}",
            textfont=dict(size=12, color="#1b1e23"),
            customdata=hover,
            hovertemplate="<b>%{y}</b> @ %{x}<br>%{customdata}<extra></extra>",
            colorscale=_discrete_scale([STATE_COLORS[s] for s in STATES]),
            zmin=-0.5,
            zmax=len(STATES) - 0.5,
            showscale=False,
            xgap=3,
            ygap=3,
        )
    )
    for state in STATES:  # a legend for the colours (heatmaps have none of their own)
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=state,
                marker=dict(size=12, symbol="square", color=STATE_COLORS[state]),
            )
        )
    fig.update_yaxes(autorange="reversed", title_text=None)
    fig.update_xaxes(side="top", title_text=None)
    fig = _layout(fig, height=max(220, 110 + 30 * len(rows)))
    # The column labels sit on top: the colour legend goes below, where it hides nothing.
    fig.update_layout(plot_bgcolor="white", legend=dict(orientation="h", yanchor="top", y=-0.02, x=0))
    return fig


ROUTE_CHANGE = "route change"
ROUTE_CHANGE_COLOR = "#0e7490"  # teal: not a degradation by itself, but worth a look beside one
OFFICIAL, OFFICIAL_COLOR = "official incident", "#1f4e9c"  # the provider's own status page
OFFICIAL_LANE = "provider's status page"


def timeline_gantt(
    periods: Sequence[Period], lanes: Sequence[str], start: datetime, end: datetime, title: str | None = None
) -> go.Figure:
    """One lane per provider/region/model; bars for degraded and down runs, purple bars for alerts."""
    fig = go.Figure()
    kinds = [(DOWN, STATE_COLORS[DOWN]), (DEGRADED, STATE_COLORS[DEGRADED])]
    kinds += [(f"alert: {sev}", color) for sev, color in ALERT_COLORS.items()]
    kinds.append((ROUTE_CHANGE, ROUTE_CHANGE_COLOR))  # a change alert: who answers changed, until accepted
    kinds.append((OFFICIAL, OFFICIAL_COLOR))
    for kind, color in kinds:
        rows = [p for p in periods if p.state == kind]
        if not rows:
            continue
        fig.add_trace(
            go.Bar(
                y=[p.lane for p in rows],
                x=[(p.end - p.start).total_seconds() * 1000 for p in rows],
                base=[p.start.isoformat() for p in rows],
                orientation="h",
                marker=dict(color=color, line=dict(width=0)),
                name=kind,
                customdata=[
                    [p.start.strftime("%Y-%m-%d %H:%M"), p.end.strftime("%Y-%m-%d %H:%M"), _dur(p), p.detail]
                    for p in rows
                ],
                hovertemplate="<b>%{y}</b><br>" + kind + " %{customdata[0]} → %{customdata[1]} UTC"
                "<br>%{customdata[2]}<br>%{customdata[3]}<extra></extra>",
            )
        )
    fig.update_yaxes(categoryorder="array", categoryarray=list(lanes)[::-1], title_text=None, type="category")
    fig.update_xaxes(type="date", range=[start, end], title_text="time (UTC)")
    fig.update_layout(barmode="overlay", bargap=0.35)
    return _layout(fig, height=max(240, 110 + 26 * len(lanes)), title=title)


def _dur(p: Period) -> str:
    minutes = int((p.end - p.start).total_seconds() // 60)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


def health_bars(
    lanes: Sequence[str], days: Sequence[datetime], colors: Sequence[Sequence[str]], hover: Sequence[Sequence[str]]
) -> go.Figure:
    """Statuspage-style rows of daily bars: one row per model/region, one bar per day."""
    palette = sorted({c for row in colors for c in row})
    index = {c: i for i, c in enumerate(palette)}
    z = [[index[c] for c in row] for row in colors]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=list(days),
            y=list(lanes),
            customdata=hover,
            hovertemplate="<b>%{y}</b><br>%{x|%Y-%m-%d}: %{customdata}<extra></extra>",
            colorscale=_discrete_scale(palette) if palette else None,
            zmin=-0.5,
            zmax=len(palette) - 0.5,
            showscale=False,
            xgap=2,
            ygap=8,
        )
    )
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(title_text=None, tickformat="%b %d")
    fig.update_layout(plot_bgcolor="white")
    return _layout(fig, height=max(120, 60 + 34 * len(lanes)))
