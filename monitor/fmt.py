"""Numbers for people: the one place that decides how a value is written for a reader.

Pure: a value in, a short string out; None and NaN read as an em dash. Used by
the dashboard (tables, tooltips, captions), alert summaries and notifications,
so `818.9545` ms and a `0.0417` error rate read the same everywhere: `819 ms`, `4.2%`.

- durations: `4.2 ms` under 10 ms, `1,234 ms` up to 10 s, then seconds: `12.3 s`, `125 s`;
- rates (fractions): `0%`, `0.42%`, `4.2%`, `42%`, `100%`;
- token speeds: `8.5 tok/s`, `142 tok/s`, `1,240 tok/s`;
- counts: `12,345`;
- spans of time (an alert's duration): `45 s`, `12 min`, `2 h 05 min`, `3 d 4 h`.
"""

from __future__ import annotations

import math

DASH = "—"
SECONDS_FROM_MS = 10_000.0  # at and above 10 s a duration reads in seconds


def _missing(value: float | None) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def ms(value: float | None) -> str:
    """A duration given in milliseconds."""
    if _missing(value):
        return DASH
    if abs(value) >= SECONDS_FROM_MS:
        seconds = value / 1000
        return f"{seconds:,.0f} s" if abs(seconds) >= 100 else f"{seconds:.1f} s"
    if abs(value) < 10:
        return f"{value:.1f} ms"
    return f"{value:,.0f} ms"


def pct(value: float | None) -> str:
    """A fraction (0.0417) as a percentage (4.2%): more digits the smaller it is."""
    if _missing(value):
        return DASH
    p = 100 * value
    if p == 0:
        return "0%"
    if abs(p) < 1:
        return f"{p:.2f}%"
    if abs(p) < 10:
        return f"{p:.1f}%"
    return f"{p:.0f}%"


def tok_s(value: float | None) -> str:
    """A decode speed in tokens per second."""
    if _missing(value):
        return DASH
    return f"{value:.1f} tok/s" if abs(value) < 10 else f"{value:,.0f} tok/s"


def count(value: int | float | None) -> str:
    if _missing(value):
        return DASH
    return f"{round(value):,}"


def counted(n: int, noun: str) -> str:
    """`1 provider`, `2 providers`: a count with its noun (plural by adding s)."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def listed(names: list[str] | tuple[str, ...], empty: str = "none") -> str:
    """`a`, `a and b`, `a, b and c`; `empty` for none."""
    names = list(names)
    if not names:
        return empty
    if len(names) == 1:
        return names[0]
    return f"{', '.join(names[:-1])} and {names[-1]}"


def usd(value: float | None) -> str:
    if _missing(value):
        return DASH
    return f"${value:,.2f}" if abs(value) >= 1 else f"${value:.4f}".rstrip("0").rstrip(".")


def span(seconds: float | None) -> str:
    """How long something lasted, rounded for reading."""
    if _missing(seconds):
        return DASH
    if seconds < 10:  # probe intervals and timeouts: 0.5 s, 2 s
        return f"{max(0.0, seconds):.1f} s".replace(".0 s", " s")
    s = round(seconds)
    if s < 90:
        return f"{s} s"
    minutes = round(s / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes:02d} min"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h"


def burn(value: float | None) -> str:
    """An SLO burn rate (DESIGN §12): `14.40x`."""
    return DASH if _missing(value) else f"{value:.2f}x"


# The unit of each alert metric's values: error_rate and cache_hit_ratio are fractions, tps tokens/s,
# an SLO alert's burn_rate a multiple of the budget's pace, the rest ms.
_BY_METRIC = {"error_rate": pct, "cache_hit_ratio": pct, "tps": tok_s, "burn_rate": burn}


def metric(name: str, value: float | None) -> str:
    """A value of an alert metric (`ttft_ms`, `total_ms`, `tps`, `error_rate`, ...) in its unit."""
    return _BY_METRIC.get(name, ms)(value)


def change(value: float | None, reference: float | None) -> str:
    """`+112%` from a reference; empty when there is nothing to compare with."""
    if _missing(value) or _missing(reference) or not reference:
        return ""
    return f"{(value / reference - 1) * 100:+.0f}%"
