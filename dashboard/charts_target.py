"""The target page's own figure: its error rate split by error kind (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

import numpy as np
import plotly.graph_objects as go

from dashboard.palette import CATEGORICAL

FONT = dict(family="Inter, Segoe UI, Helvetica, Arial, sans-serif", size=13, color="#262730")


def error_rate_by_kind(
    bucket_starts: Sequence[datetime], measured: Sequence[int], failures: Sequence[tuple[datetime, str]]
) -> dict[str, list[float | None]]:
    """kind -> failed share of each bucket's measured probes (None where nothing was measured)."""
    if not bucket_starts:
        return {}
    starts = np.array([b.timestamp() for b in bucket_starts])
    step = starts[1] - starts[0] if len(starts) > 1 else 3600.0
    counts: dict[str, np.ndarray] = {}
    for at, kind in failures:
        i = int(np.searchsorted(starts, at.timestamp(), side="right")) - 1
        if 0 <= i < len(starts) and at.timestamp() < starts[i] + step:
            counts.setdefault(kind, np.zeros(len(starts)))[i] += 1
    total = np.asarray(measured, dtype=float)
    return {
        kind: [None if m <= 0 else float(c / m) for c, m in zip(row, total, strict=True)]
        for kind, row in sorted(counts.items())
    }


def error_kinds_figure(
    bucket_starts: Sequence[datetime],
    bucket: timedelta,
    measured: Sequence[int],
    failures: Sequence[tuple[datetime, str]],
    start: datetime,
    end: datetime,
) -> go.Figure:
    """Stacked bars: each bucket's error rate, one colour per error kind."""
    rates = error_rate_by_kind(bucket_starts, measured, failures)
    x = [b + bucket / 2 for b in bucket_starts]
    fig = go.Figure()
    for i, (kind, values) in enumerate(rates.items()):
        fig.add_trace(
            go.Bar(
                x=x,
                y=[None if v is None else 100 * v for v in values],
                name=kind,
                marker_color=CATEGORICAL[i % len(CATEGORICAL)],
                hovertemplate=f"<b>{kind}</b><br>%{{x}}<br>%{{y:.1f}}% of probes<extra></extra>",
            )
        )
    height, top_px = 300, 30
    fig.update_layout(
        template="plotly_white",
        font=FONT,
        height=height,
        barmode="stack",
        bargap=0.1,
        showlegend=True,
        margin=dict(l=10, r=10, t=top_px, b=10),
        legend=dict(orientation="v", yanchor="top", y=1, xanchor="left", x=1.02),  # as charts.LEGEND_RIGHT
    )
    fig.update_xaxes(range=[start, end], title_text="time (UTC)")
    fig.update_yaxes(title_text="error rate (%)", rangemode="tozero")
    return fig
