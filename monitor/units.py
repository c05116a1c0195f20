"""Durations and percentages as people write them in the config file.

Pure functions: a value in, a float out, or `ValueError` with a message that
never repeats the input (the caller adds the value itself, masked if it is a
secret, so a bad value taken from `${SOME_TOKEN}` never reaches the terminal).
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

MINUTE_S, HOUR_S, DAY_S = 60.0, 3600.0, 86400.0  # the one copy of these
_UNITS_S = {"ms": 0.001, "s": 1.0, "m": MINUTE_S, "h": HOUR_S, "d": DAY_S, "w": 7 * DAY_S}
_PART = re.compile(r"\s*(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|h|d|w)")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)")
# Bigger than any sane setting and small enough that float arithmetic stays exact-ish.
_MAX_NUMBER = 1e15

DURATION_HINT = "expected a duration like 90s, 5m, 2h, 1d, 1h30m or 500ms"


def parse_duration(value: object) -> float:
    """Seconds from `90s`, `5m`, `2h`, `1d`, `500ms`, `1h30m`; a bare number is seconds."""
    if isinstance(value, bool):  # bool is an int: `interval: true` is a mistake, not 1 s
        raise ValueError(DURATION_HINT)
    if isinstance(value, int | float):
        return _checked(float(value) if abs(value) <= _MAX_NUMBER else math.inf)
    if not isinstance(value, str):
        raise ValueError(DURATION_HINT)
    text = value.strip()
    if _NUMBER.fullmatch(text):
        return _checked(float(text))
    pos, total, seen = 0, 0.0, set()
    while pos < len(text):
        match = _PART.match(text, pos)
        if not match:
            raise ValueError(DURATION_HINT)
        unit = match.group(2)
        if unit in seen:  # `5m5m` is a typo more often than an intent
            raise ValueError(f"{DURATION_HINT} (unit {unit!r} given twice)")
        seen.add(unit)
        total += float(match.group(1)) * _UNITS_S[unit]
        pos = match.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    if not seen:
        raise ValueError(DURATION_HINT)
    return _checked(total)


def _checked(seconds: float) -> float:
    if not math.isfinite(seconds) or seconds > _MAX_NUMBER:
        raise ValueError("duration is too large")
    if seconds < 0:
        raise ValueError("duration must not be negative")
    return seconds


def format_duration(seconds: float) -> str:
    """The shortest exact spelling, for output: 120 -> `2m`, 5400 -> `1h30m`, 0.5 -> `500ms`."""
    if not math.isfinite(seconds) or seconds < 0:
        return str(seconds)
    ms = round(seconds * 1000)
    if ms == 0:
        return "0s"
    parts = []
    for unit in ("d", "h", "m", "s", "ms"):
        size = round(_UNITS_S[unit] * 1000)
        count, ms = divmod(ms, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)


PERCENT_HINT = "expected a percentage like 50% or a fraction between 0 and 1"


def parse_percent(value: object, max_fraction: float = 1.0) -> float:
    """A fraction from `50%` (0.5) or a bare number 0..1; at most `max_fraction`.

    A bare number above 1 is refused rather than guessed: `above: 20` for an
    error rate could mean 20% or 2000%, and the wrong guess silences a page.
    """
    if isinstance(value, bool):
        raise ValueError(PERCENT_HINT)
    if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        value = float(value)  # `${ERROR_BUDGET:-0.2}` arrives as text
    if isinstance(value, str):
        text = value.strip()
        if not text.endswith("%") or not _NUMBER.fullmatch(text[:-1].strip()):
            raise ValueError(PERCENT_HINT)
        # Decimal division, so 99.9% is 0.999 exactly as a float can be (not 0.9990000000000001): an
        # uptime of exactly the promise must not fall below it.
        fraction = float(Decimal(text[:-1].strip()) / 100)
    elif isinstance(value, int | float):
        fraction = float(value) if abs(value) <= _MAX_NUMBER else math.inf
        if fraction > 1.0:
            raise ValueError(f"a bare number is a fraction between 0 and 1; write {_pct(fraction)} for a percentage")
    else:
        raise ValueError(PERCENT_HINT)
    if not math.isfinite(fraction) or fraction < 0 or fraction > max_fraction:
        raise ValueError(f"must be between 0% and {_pct(max_fraction * 100)}")
    return fraction


def _pct(number: float) -> str:
    return f"{number:g}%" if math.isfinite(number) else "a percentage"


SIZE_HINT = "expected a size like 512M, 2G or 65536 (bytes)"
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([KMGT]i?B?|B)?", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(value: str) -> int:
    """Bytes from `65536`, `64K`, `512M`, `2G`, `1GiB` (binary units: disks and spools are sized so)."""
    match = _SIZE.fullmatch(value.strip())
    if not match:
        raise ValueError(SIZE_HINT)
    unit = (match.group(2) or "").upper().rstrip("B").rstrip("I")
    size = float(match.group(1)) * _SIZE_UNITS[unit]
    if size < 1 or size > _MAX_NUMBER:
        raise ValueError("size must be at least one byte")
    return int(size)
