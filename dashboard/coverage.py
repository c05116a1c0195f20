"""How much of a period a figure stands on (pure): '98.96%', '98.96% · 6 h of data', or nothing.

A figure over a period says how much of it has data when that is not
(nearly) all of it, and is left out when the data cover too little of the
period to stand for it: six hours of history must not read as a 30-day uptime.
"""

from __future__ import annotations

FULL_COVERAGE = 0.95
THIN_COVERAGE = 0.02


def span_text(seconds: float) -> str:
    hours = seconds / 3600
    if hours < 1:
        return f"{max(1, round(seconds / 60))} min"
    return f"{hours:.0f} h" if hours < 48 else f"{hours / 24:.0f} d"


def note(covered_s: float, period_s: float) -> str:
    """' · 6 h of data' when the data cover part of the period, '' when (nearly) all of it."""
    if period_s <= 0 or covered_s >= FULL_COVERAGE * period_s:
        return ""
    return f" · {span_text(covered_s)} of data"


def figure(text: str | None, covered_s: float, period_s: float) -> str:
    """`text` (a formatted figure) with its coverage note; '—' without data or with too little of it."""
    if text is None or covered_s <= 0:
        return "—"
    if period_s > 0 and covered_s < THIN_COVERAGE * period_s:
        return f"—{note(covered_s, period_s)}"
    return f"{text}{note(covered_s, period_s)}"
