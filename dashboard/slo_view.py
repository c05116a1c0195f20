"""SLOs, shaped for the pages (pure: reports in, rows and series out)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from monitor.slo.windows import burn_windows
from monitor.units import format_duration


def pct(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value * 100:.{digits}f}%"


def scope_rows(report) -> list[dict]:
    """The per-scope table: one row per scope, worst budget first."""
    rows = []
    for s in sorted(report.scopes, key=lambda s: (s.budget.remaining is None, s.budget.remaining or 0.0)):
        row = {
            "scope": s.scope_key,
            "probes": s.budget.probes,
            "attainment": pct(s.budget.attainment, 3),
            "objective": pct(s.objective, 3),
            "budget left": pct(s.budget.remaining, 1),
        }
        for window, rate in s.burn_rates.items():
            row[f"burn {window}"] = "-" if rate is None else f"{rate:.2f}x"
        if s.exhausted:
            row["budget runs out"] = "spent"
        else:
            row["budget runs out"] = "-" if s.exhausts_at is None else s.exhausts_at.strftime("%Y-%m-%d %H:%M UTC")
        rows.append(row)
    return rows


def burn_down(report, index: int) -> tuple[np.ndarray, np.ndarray]:
    """(day starts in epoch s, budget remaining after each day) for one scope over the period: 1 - bad
    so far / the whole period's budget (monitor.slo.budget: estimated from the probes seen when they
    span only part of the period), one budget for every day, so the line starts at or below 100%,
    only falls, and ends at the scope's budget left; NaN before its first probe."""
    budget = report.scopes[index].budget
    probes = np.cumsum(report.day_probes[index]).astype(float)
    bad = np.cumsum(report.day_probes[index] - report.day_good[index]).astype(float)
    days = np.asarray(report.days, dtype=float)
    if not budget.probes:
        return days, np.full(days.shape, np.nan)
    return days, np.where(probes > 0, budget.remaining_after(bad), np.nan)


def burn_bars(report, index: int) -> tuple[list[str], list[float | None], list[float]]:
    """(long windows, burn rate over each, the factor its pair alerts at) for one scope."""
    status = report.scopes[index]
    factor = {format_duration(w.long_s): w.factor for w in burn_windows(report.slo.period_s)}
    names = list(status.burn_rates)
    return names, [status.burn_rates[n] for n in names], [factor[n] for n in names]


def month_rows(rows: Sequence) -> list[dict]:
    """Provider health's table: per SLO and scope, attainment per calendar month."""
    table: dict[tuple[str, str], dict] = {}
    for r in rows:
        row = table.setdefault((r.slo, r.scope), {"SLO": r.slo, "scope": r.scope, "objective": pct(r.objective, 2)})
        mark = "" if r.met is None else " ✓" if r.met else " ✗"
        row[r.month] = pct(r.attainment, 3) + mark
    return list(table.values())
