"""The weekly report's chart (pure: values in, PNG bytes out): one provider's TTFT p50 per day of the
week, this week in the provider's colour against the week before in grey, Monday to Sunday.

Drawn like the alert chart (monitor.chartstyle): matplotlib's Agg canvas on a Figure of its own,
never pyplot, so the leader's job and the dashboard can draw at once; colours from monitor.palette.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from monitor import fmt
from monitor.chartstyle import TEXT, level_ticks, png, tidy
from monitor.palette import NEUTRAL, provider_colors

WIDTH_PX, HEIGHT_PX, DPI = 880, 300, 110
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def _values(values: Sequence[float | None]) -> list[float]:
    return [math.nan if v is None else float(v) for v in values]


def ttft_week_png(
    provider: str,
    this_week: Sequence[float | None],
    week_before: Sequence[float | None],
    labels: tuple[str, str],
    color: str | None = None,
) -> bytes:
    """`labels`: (this week's, the week before's), e.g. ("2026-W48", "2026-W47"); `color`: the provider's
    among all the report's (`palette.provider_colors` of them all), else its own."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH_PX / DPI, HEIGHT_PX / DPI), dpi=DPI, facecolor="white")
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.1, 0.14, 0.87, 0.66))
    x = list(range(7))
    now, before = _values(this_week), _values(week_before)
    color = color or provider_colors([provider])[provider]
    ax.plot(x, before, color=NEUTRAL, lw=1.6, ls=(0, (5, 3)), marker="o", ms=3.5, label=labels[1])
    ax.plot(x, now, color=color, lw=2.2, marker="o", ms=4.5, label=labels[0])
    finite = [v for v in now + before if not math.isnan(v)]
    top = max(finite) * 1.1 if finite else 0.0
    if not finite:
        ax.text(0.5, 0.5, "no successful probes in either week", transform=ax.transAxes, ha="center", color=NEUTRAL)
    ticks = level_ticks(top)
    ax.set_xlim(-0.3, 6.3)
    ax.set_ylim(0, max(ticks[-1], top) or 1.0)
    ax.set_xticks(x, list(DAYS))
    ax.set_yticks(ticks, ["0" if v == 0 else fmt.ms(v) for v in ticks])
    tidy(ax)
    fig.text(0.1, 0.9, f"{provider}: TTFT p50 per day", fontsize=11, color=TEXT, fontweight="bold", va="bottom")
    ax.legend(
        loc="lower left", bbox_to_anchor=(0.0, 1.01), fontsize=8, frameon=False, ncols=2, borderaxespad=0.0,
        handlelength=2.2,
    )  # fmt: skip
    return png(fig, DPI)
