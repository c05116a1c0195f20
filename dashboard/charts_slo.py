"""Plotly builders for the SLOs page (pure: arrays in, figures out)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np
import plotly.graph_objects as go

from dashboard.charts import base_layout

GOOD, BAD, THRESHOLD = "#2e7d32", "#c62828", "#37474f"


def burn_down_figure(days_s: np.ndarray, remaining: np.ndarray, title: str) -> go.Figure:
    """Budget left after each day of the period; below 0 the budget is spent."""
    x = [datetime.fromtimestamp(float(d), UTC) for d in days_s]
    fig = go.Figure(
        go.Scatter(
            x=x,
            y=remaining * 100,
            mode="lines+markers",
            line=dict(color=GOOD, width=2),
            name="budget left",
            hovertemplate="%{x|%Y-%m-%d}: %{y:.1f}% of the budget left<extra></extra>",
        )
    )
    fig.add_hline(y=0, line=dict(color=BAD, dash="dash"), annotation_text="budget spent")
    fig.update_yaxes(title="error budget left (%)")
    return base_layout(fig, title, height=320)


def burn_rate_figure(
    windows: Sequence[str], rates: Sequence[float | None], factors: Sequence[float], title: str
) -> go.Figure:
    """Burn rate over each long window beside the factor its pair alerts at (a tick per window)."""
    values = np.array([np.nan if r is None else r for r in rates], dtype=float)
    colors = [BAD if not np.isnan(v) and v >= f else GOOD for v, f in zip(values, factors, strict=True)]
    fig = go.Figure(
        [
            go.Bar(
                x=list(windows),
                y=values,
                marker_color=colors,
                name="burn rate",
                hovertemplate="%{x}: %{y:.2f}x<extra></extra>",
            ),
            go.Scatter(
                x=list(windows),
                y=list(factors),
                mode="markers",
                marker=dict(symbol="line-ew-open", size=40, line=dict(width=3, color=THRESHOLD)),
                name="alerts at (with its short window)",
                hovertemplate="%{x}: alerts at %{y:g}x<extra></extra>",
            ),
        ]
    )
    fig.update_yaxes(title="burn rate (1x spends the budget in exactly one period)", rangemode="tozero")
    return base_layout(fig, title, height=320)
