"""What every server-side chart shares (DESIGN §17, §18): colours, round axis steps, tidy axes, the PNG.

The alert chart (monitor.alerts.chart), the weekly report's (monitor.reports.weekly.chart) and the SLA
report's (monitor.reports.sla.chart) draw on matplotlib's Agg canvas, each on a Figure of its own
(never pyplot: server threads draw at once), and look alike through these.
"""

from __future__ import annotations

import base64
import io
import math
from typing import Any

TEXT = "#262730"  # the dashboard's font colour
GRID = "#e6e8eb"
AXIS = "#c9ccd1"


def level_ticks(top: float) -> list[float]:
    """About five round steps from 0 to `top` (1, 2, 2.5 or 5 × a power of ten)."""
    if not top > 0 or math.isnan(top):
        return [0.0]
    raw = top / 5
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    return [i * step for i in range(int(top // step) + 1)]


def tidy(ax: Any, labelsize: float = 8.5) -> None:
    """Light grid behind the data, no top or right spine, grey axes, ticks without marks."""
    ax.grid(True, color=GRID, lw=0.8)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_color(AXIS)
    ax.tick_params(colors=TEXT, labelsize=labelsize, length=0)


def png(fig: Any, dpi: int, compress_level: int = 6) -> bytes:
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=dpi, facecolor="white", pil_kwargs={"compress_level": compress_level})
    return out.getvalue()


def data_url(png_bytes: bytes) -> str:
    """A PNG inline (`data:` URL): a page or mail in one piece, and nothing for a PDF engine to fetch."""
    return "data:image/png;base64," + base64.b64encode(png_bytes).decode("ascii")
