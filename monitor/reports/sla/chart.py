"""The SLA report's chart (DESIGN §17): per day, the minutes down, slow and left out. Pure: values in, PNG out.

One bar group a day of the period (UTC): down minutes in the page colour, slow minutes in the
ticket colour, left-out minutes in grey, on a shared axis of minutes. matplotlib's Agg canvas on a
`Figure` of its own (never pyplot, so report threads can draw at once), styled as every chart (monitor.chartstyle).
"""

from __future__ import annotations

from datetime import timedelta

from monitor import chartstyle
from monitor.chartstyle import TEXT, tidy
from monitor.palette import NEUTRAL, SEVERITY_COLORS
from monitor.reports.sla.report import ContractResult

WIDTH_PX, HEIGHT_PX, DPI = 960, 280, 120


def daily_minutes(result: ContractResult) -> tuple[list, list[int], list[int], list[int]]:
    """(UTC midnights, down minutes, slow minutes, left-out uptime minutes) per UTC day the period touches."""
    period = result.period
    day, last = period.start.replace(hour=0, minute=0), period.end - timedelta(minutes=1)
    days = []
    while day <= last:  # UTC midnights, the first one at or before the period's start
        days.append(day)
        day += timedelta(days=1)
    index = {d.date(): i for i, d in enumerate(days)}
    down, slow, left = [0] * len(days), [0] * len(days), [0] * len(days)
    for b in result.uptime.broken if result.uptime else ():
        down[index[b.at.date()]] += 1
    for b in result.latency.broken if result.latency else ():
        slow[index[b.at.date()]] += 1
    for run in result.uptime.left_out if result.uptime else ():
        minute = run.start
        while minute < run.end:  # runs cross midnight: split them by day
            next_day = min(run.end, (minute + timedelta(days=1)).replace(hour=0, minute=0))
            left[index[minute.date()]] += int((next_day - minute).total_seconds() // 60)
            minute = next_day
    return days, down, slow, left


def render_png(result: ContractResult) -> bytes:
    from matplotlib.figure import Figure

    days, down, slow, left = daily_minutes(result)
    figure = Figure(figsize=(WIDTH_PX / DPI, HEIGHT_PX / DPI), dpi=DPI)
    axes = figure.add_subplot()
    x = list(range(len(days)))
    width = 0.28
    axes.bar([i - width for i in x], down, width, color=SEVERITY_COLORS["page"], label="down")
    axes.bar(x, slow, width, color=SEVERITY_COLORS["ticket"], label="slow")
    axes.bar([i + width for i in x], left, width, color=NEUTRAL, alpha=0.45, label="left out")
    step = max(1, len(days) // 15)
    axes.set_xticks(x[::step], [d.strftime("%d %b") for d in days[::step]], fontsize=7, color=TEXT)
    axes.set_ylabel("minutes (UTC day)", fontsize=8, color=TEXT)
    axes.set_title(f"{result.name}: minutes down, slow and left out, per day", fontsize=9, color=TEXT, loc="left")
    tidy(axes, labelsize=7)
    axes.grid(False, axis="x")
    axes.legend(fontsize=7, frameon=False, loc="lower right", bbox_to_anchor=(1.0, 1.0), ncols=3)  # beside the title
    figure.tight_layout()
    return chartstyle.png(figure, DPI)


def data_url(result: ContractResult) -> str:
    return chartstyle.data_url(render_png(result))
