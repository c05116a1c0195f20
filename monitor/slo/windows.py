"""The multiwindow, multi-burn-rate alert pairs of the Google SRE workbook (ch. 5), scaled to the period.

For a 30-day period they are the workbook's: page at 14.4x over 1 h and 5 min, page at 6x over
6 h and 30 min, ticket at 3x over 1 d and 2 h, ticket at 1x over 3 d and 6 h. A factor f over a
long window L spends f * L / P of the budget: 2 %, 5 %, 10 % and 10 % for the four pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

from monitor.units import format_duration

PAGE, TICKET = "page", "ticket"
SEVERITY_RANK = {TICKET: 1, PAGE: 2}
# (severity, burn factor, long window as a fraction of the period, short window as a fraction)
WORKBOOK_PAIRS = (
    (PAGE, 14.4, 720, 8640),
    (PAGE, 6.0, 120, 1440),
    (TICKET, 3.0, 30, 360),
    (TICKET, 1.0, 10, 120),
)
# Float noise must not decide "at or above": (bad / all) / (1 - objective) computed in another order
# can land a hair under an exact factor.
RELATIVE_SLACK = 1e-9


@dataclass(frozen=True, slots=True)
class BurnWindow:
    severity: str
    factor: float
    long_s: float
    short_s: float

    @property
    def name(self) -> str:
        """`1h/5m`: the long window, then the short one."""
        return f"{format_duration(self.long_s)}/{format_duration(self.short_s)}"

    def trips(self, long_burn: float, short_burn: float) -> bool:
        floor = self.factor * (1 - RELATIVE_SLACK)
        return long_burn >= floor and short_burn >= floor


def burn_windows(period_s: float) -> tuple[BurnWindow, ...]:
    """The four pairs for a period, fastest first (the order in which they escalate)."""
    return tuple(
        BurnWindow(sev, factor, period_s / long, period_s / short) for sev, factor, long, short in WORKBOOK_PAIRS
    )


def window_lengths(period_s: float) -> tuple[float, ...]:
    """Every distinct window length the pairs use, shortest first."""
    return tuple(sorted({s for w in burn_windows(period_s) for s in (w.long_s, w.short_s)}))


def long_windows(period_s: float) -> tuple[float, ...]:
    """The long windows, shortest first: the burn rates `firsttoken slo` reports."""
    return tuple(sorted({w.long_s for w in burn_windows(period_s)}))


def burn_rate(bad: int, total: int, error_budget: float) -> float:
    """(bad / all) / (1 - objective); 0 for an empty window."""
    return (bad / total) / error_budget if total else 0.0


def higher(a: str | None, b: str | None) -> str | None:
    """The more severe of two severities (None is below both)."""
    return max(a, b, key=lambda s: SEVERITY_RANK.get(s or "", 0))
