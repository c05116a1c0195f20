"""Provider health, shaped for the page (pure: grids in, rows and colours out).

Its figures are the public status's (DESIGN §16, monitor.availability): minutes probed and down by
the quorum of vantage points, never one agent's path, and the median TTFT the quorum saw
(`quorum_grid` and `quorum_current` turn `statushistory`'s figures into the grids below: a
"measured" minute is one some agent probed, a "failed" one a minute the quorum saw fail).

Prompts of a model and region are pooled into one lane, as a product manager
reads it ("is claude-sonnet in eu-west healthy?"): minutes probed and down are
summed; the latency ratio is the worst of the prompts', so a slow long prompt
is not hidden by a fast short one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta

import numpy as np

from dashboard import coverage, status
from monitor import fmt
from monitor.storage.queries.alertviews import AlertView
from monitor.storage.queries.health import Current, PeriodGrid
from monitor.storage.queries.statushistory import Daily, Live
from monitor.storage.queries.targets import TargetRef


@dataclass(frozen=True)
class Lane:
    name: str  # "model · region"
    rows: tuple[int, ...]  # indexes into the grid's targets


def lanes_for(grid: PeriodGrid, refs: Mapping[str, TargetRef], provider: str) -> list[Lane]:
    lanes: dict[str, list[int]] = {}
    for i, tid in enumerate(grid.targets):
        ref = refs.get(tid)
        if ref is not None and ref.provider == provider:
            lanes.setdefault(f"{ref.model} · {ref.region}", []).append(i)
    # A configured target never probed in the period has a row of zeros: nothing to draw.
    return [Lane(name, tuple(rows)) for name, rows in sorted(lanes.items()) if grid.measured[rows].sum()]


def _availability(measured, failed):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(measured > 0, 1 - failed / np.maximum(measured, 1), np.nan)


def daily_bars(grid: PeriodGrid, lanes: Sequence[Lane]) -> tuple[list[list[str]], list[list[str]]]:
    """(colours, hover texts) per lane × day."""
    ratio = grid.latency_ratio()
    colors, hover = [], []
    for lane in lanes:
        idx = list(lane.rows)
        measured = grid.measured[idx].sum(axis=0)
        failed = grid.failed[idx].sum(axis=0)
        avail = _availability(measured, failed)
        with np.errstate(all="ignore"):
            worst = np.nanmax(np.where(np.isnan(ratio[idx]), -np.inf, ratio[idx]), axis=0)
        worst = np.where(np.isfinite(worst), worst, np.nan)
        period_s = grid.period.total_seconds()
        full = np.full(measured.shape, period_s / 3600)
        hours = grid.hours_with_data[idx].max(axis=0) if grid.hours_with_data is not None else full
        row_c, row_h = [], []
        for a, r, m, f, h in zip(avail, worst, measured, failed, hours, strict=True):
            color, label = status.day_color(None if math.isnan(a) else float(a), None if math.isnan(r) else float(r))
            row_c.append(color)
            minutes = f"{fmt.count(f)} min down of {fmt.count(m)} min probed{coverage.note(float(h) * 3600, period_s)}"
            row_h.append("no probes" if m == 0 else f"{label}<br>{minutes}")
        colors.append(row_c)
        hover.append(row_h)
    return colors, hover


def quorum_grid(daily: Daily) -> PeriodGrid:
    """`statushistory.daily` as the page's grid: minutes probed and down by the quorum per target and
    day (and since each window's start), the quorum's median TTFT as each day's typical one."""
    minutes = {
        name: ((probed * 60).round(), (down * 60).round(), np.full(len(daily.targets), np.nan))
        for name, (probed, down) in daily.windows.items()
    }
    return PeriodGrid(
        daily.targets,
        daily.day_starts,
        timedelta(days=1),
        (daily.probed_h * 60).round(),
        (daily.down_h * 60).round(),
        daily.ttft_p50_ms,
        minutes,
        daily.probed_h,
        {name: probed for name, (probed, _) in daily.windows.items()},
    )


def quorum_current(live: Live, before: Current) -> Current:
    """Each target's recent minutes by the quorum (`statushistory.live`) against its median TTFT of the
    24 hours before (`before`)."""
    index = {t: i for i, t in enumerate(before.targets)}
    baseline = np.array([before.baseline_ttft_p50_ms[index[t]] if t in index else np.nan for t in live.targets])
    return Current(live.targets, live.probed_min.round(), live.down_min.round(), live.ttft_p50_ms, baseline)


def period_figure(measured: int, failed: int, hours: float, period_h: float) -> str:
    """Availability over a period with its coverage: '98.96%', '98.96% · 6 h of data', '—'."""
    text = f"{100 * (1 - failed / measured):.2f}%" if measured else None
    return coverage.figure(text, hours * 3600, period_h * 3600)


def uptime_rows(grid: PeriodGrid, lanes: Sequence[Lane], windows: Mapping[str, timedelta]) -> list[dict[str, str]]:
    """One row per lane: availability over each window and over the grid, with its coverage.

    A lane's hours with data are those of its best-covered prompt: prompts of a
    model and region are probed side by side.
    """
    out = []
    grid_h = len(grid.period_starts) * grid.period.total_seconds() / 3600
    for lane in lanes:
        idx = list(lane.rows)
        row = {"model · region": lane.name}
        for name, span in windows.items():
            measured, failed, _ = grid.window_totals[name]
            hours = grid.window_hours[name][idx].max() if name in grid.window_hours else span.total_seconds() / 3600
            row[name] = period_figure(
                int(measured[idx].sum()), int(failed[idx].sum()), float(hours), span.total_seconds() / 3600
            )
        hours = grid.hours_with_data[idx].sum(axis=1).max() if grid.hours_with_data is not None else grid_h
        row["90 d"] = period_figure(int(grid.measured[idx].sum()), int(grid.failed[idx].sum()), float(hours), grid_h)
        out.append(row)
    return out


def current_states(current: Current) -> dict[str, str]:
    """State of each target over the recent window, its median TTFT against the day before."""
    out = {}
    for i, tid in enumerate(current.targets):
        now, base = current.ttft_p50_ms[i], current.baseline_ttft_p50_ms[i]
        ratio = None if math.isnan(now) or math.isnan(base) or base <= 0 else float(now / base)
        out[tid] = status.state_of(int(current.measured[i]), int(current.failed[i]), ratio)
    return out


def provider_statuses(
    states: Mapping[str, str], refs: Mapping[str, TargetRef], live: Sequence[AlertView]
) -> dict[str, str]:
    by_provider: dict[str, list[str]] = {}
    for tid, state in states.items():
        if tid in refs:
            by_provider.setdefault(refs[tid].provider, []).append(state)
    for ref in refs.values():
        by_provider.setdefault(ref.provider, [])
    return {
        p: status.provider_status(s, [a.metric for a in live if a.provider == p and a.state == "firing"])
        for p, s in sorted(by_provider.items())
    }


def incident_rows(alerts: Sequence[AlertView], provider: str) -> list[dict[str, object]]:
    rows = []
    for a in alerts:
        if a.provider != provider:
            continue
        end = a.resolved_at
        minutes = int(((end - a.begins_at).total_seconds()) // 60) if end else None
        where = " ".join(x for x in (a.model, a.region, a.prompt) if x) or "all models and regions"
        rows.append(
            {
                "started (UTC)": a.begins_at.strftime("%Y-%m-%d %H:%M"),
                "ended (UTC)": end.strftime("%Y-%m-%d %H:%M") if end else "ongoing",
                "duration": "ongoing" if minutes is None else fmt.span(60 * minutes),
                "impact": f"{_metric_words(a.metric)} on {where}",
                "measured": _value(a),
                "severity": a.severity,
            }
        )
    return rows


def _metric_words(metric: str) -> str:
    return {
        "error_rate": "errors",
        "ttft_ms": "slow first token",
        "ttft_answer_ms": "slow first answer token",
        "total_ms": "slow answers",
        "tps": "slow decoding",
    }.get(metric, metric)


def _value(a: AlertView) -> str:
    """The worst it got (else the latest value), against normal."""
    value = a.worst_value if a.worst_value is not None else a.value
    if value is None:
        return ""
    errors = " errors" if a.metric == "error_rate" else ""
    base = f" (normal {fmt.metric(a.metric, a.baseline)})" if a.baseline is not None else ""
    return f"{fmt.metric(a.metric, value)}{errors}{base}"
