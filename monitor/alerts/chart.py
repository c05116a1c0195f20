"""The alert chart (DESIGN §18): a PNG of the regression, drawn without a browser (pure: values in, bytes out).

    png = render_png(ChartSpec(title=…, metric="ttft_ms", start=…, end=…, changed_at=…, lines=(Line(…), …)))

One line per vantage point (the bucket medians of the metric, or its error rate), the baseline band
(where the metric sat before the change: its p10–p90) with the alert's baseline (or threshold) as a
dashed line, and the change marked: a line where it began, the span it lasted shaded in the alert's
colour. Axes in the metric's unit (monitor.fmt), times in UTC, colours from monitor.palette (the
dashboard's). matplotlib's Agg canvas on a `Figure` of its own, never pyplot: no global state, so
server threads can draw at once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from monitor import fmt
from monitor.chartstyle import TEXT, level_ticks, png, tidy
from monitor.palette import NEUTRAL

WIDTH_PX, HEIGHT_PX, DPI = 960, 400, 120


@dataclass(frozen=True, slots=True)
class Line:
    label: str  # the vantage point
    t_s: Sequence[float]  # bucket midpoints, epoch seconds
    values: Sequence[float | None]  # None or NaN where the bucket had no measurement
    color: str


@dataclass(frozen=True, slots=True)
class ChartSpec:
    title: str
    metric: str  # ttft_ms, tps, error_rate …: the axis unit
    start: datetime
    end: datetime
    lines: tuple[Line, ...]
    changed_at: datetime | None = None  # when the condition began
    resolved_at: datetime | None = None
    baseline: float | None = None  # the alert's own baseline (or threshold), dashed
    reference: str = "baseline"  # what `baseline` is, in words: baseline, threshold, SLO bound
    band: tuple[float, float] | None = None  # where it sat before the change (p10–p90)
    accent: str = NEUTRAL  # the alert's colour: its severity's, or green once resolved


def _seconds(moment: datetime) -> float:
    return moment.timestamp()


def _clock(value: float, _pos: object = None) -> str:
    return datetime.fromtimestamp(value, UTC).strftime("%H:%M")


def _finite(values: Sequence[float | None]) -> list[float]:
    return [math.nan if v is None else float(v) for v in values]


def _hour_ticks(x0: float, x1: float) -> list[float]:
    """Whole hours (every other one past 8 hours): the times a reader rounds to."""
    step = 3600.0 if x1 - x0 <= 8 * 3600 else 7200.0
    first = math.ceil(x0 / step) * step
    return [first + i * step for i in range(int((x1 - first) // step) + 1)]


def render_png(spec: ChartSpec) -> bytes:
    """The chart as PNG bytes (WIDTH_PX × HEIGHT_PX)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH_PX / DPI, HEIGHT_PX / DPI), dpi=DPI, facecolor="white")
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.095, 0.12, 0.875, 0.71))
    x0, x1 = _seconds(spec.start), _seconds(spec.end)
    top = 0.0
    if spec.band is not None:
        lo, hi = spec.band
        ax.axhspan(lo, hi, color=NEUTRAL, alpha=0.13, lw=0, label="baseline band (p10–p90 before)")
        top = max(top, hi)
    if spec.baseline is not None:
        ax.axhline(spec.baseline, color=NEUTRAL, lw=1.2, ls=(0, (5, 3)), label=spec.reference)
        top = max(top, spec.baseline)
    drawn = 0
    for line in spec.lines:
        values = _finite(line.values)
        finite = [v for v in values if not math.isnan(v)]
        if not finite:
            continue
        ax.plot(list(line.t_s), values, color=line.color, lw=1.8, label=line.label, solid_joinstyle="round")
        top = max(top, *finite)
        drawn += 1
    if spec.changed_at is not None:
        began = _seconds(spec.changed_at)
        until = _seconds(spec.resolved_at) if spec.resolved_at is not None else x1
        ax.axvspan(max(began, x0), min(until, x1), color=spec.accent, alpha=0.09, lw=0)
        ax.axvline(began, color=spec.accent, lw=1.6, ls="--")
        words = f"began {_clock(began)}" + (f", resolved {_clock(until)}" if spec.resolved_at else "")
        right = began > x0 + 0.7 * (x1 - x0)  # late in the window: the words go left of the line
        ax.annotate(
            words, (began, 1.0), xycoords=("data", "axes fraction"), xytext=(-5 if right else 5, -4),
            textcoords="offset points", va="top", ha="right" if right else "left", fontsize=8.5, color=spec.accent,
            fontweight="bold",
        )  # fmt: skip
    if not drawn:
        ax.text(0.5, 0.5, "no samples in this window", transform=ax.transAxes, ha="center", color=NEUTRAL)
    ticks = level_ticks(top * 1.08)
    ax.set_xlim(x0, x1)
    ax.set_ylim(0, max(ticks[-1], top * 1.08) or 1.0)
    hours = _hour_ticks(x0, x1)
    ax.set_xticks(hours, [_clock(t) for t in hours])
    ax.set_yticks(ticks, ["0" if v == 0 else fmt.metric(spec.metric, v) for v in ticks])
    tidy(ax)
    ax.text(1.0, -0.1, "UTC", transform=ax.transAxes, ha="right", va="top", fontsize=8.5, color=NEUTRAL)
    fig.text(0.095, 0.915, spec.title, fontsize=11, color=TEXT, fontweight="bold", va="bottom")
    if drawn or spec.baseline is not None:
        ax.legend(
            loc="lower left", bbox_to_anchor=(0.0, 1.01), fontsize=8, frameon=False, ncols=min(5, drawn + 2),
            borderaxespad=0.0, handlelength=1.6, columnspacing=1.2,
        )  # fmt: skip
    return png(fig, DPI, compress_level=3)
