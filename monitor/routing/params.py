"""The routes query's parameters as the command line and GET /routes spell them. Pure."""

from __future__ import annotations

from datetime import timedelta

from monitor.units import DURATION_HINT, parse_duration

BY = ("ttft", "tps", "cost", "warm_ttft")  # warm_ttft: cache probes' warm p50 (DESIGN §13)


class RouteParamError(ValueError):
    """A parameter a user typed is not usable; the message says which and why."""


def parse_floor(text: str) -> float:
    """`99%` or `0.99` -> 0.99."""
    value = str(text).strip()
    try:
        number = float(value[:-1]) / 100 if value.endswith("%") else float(value)
    except ValueError:
        raise RouteParamError("min-availability: a fraction (0.99) or a percent (99%)") from None
    if not 0 <= number <= 1:
        raise RouteParamError("min-availability: must be between 0 and 100%")
    return number


def parse_window(text: str) -> timedelta:
    try:
        seconds = parse_duration(text)
    except ValueError:
        raise RouteParamError(f"window: {DURATION_HINT}") from None
    if seconds <= 0:
        raise RouteParamError("window: must be positive")
    return timedelta(seconds=seconds)


def parse_by(text: str) -> str:
    if text not in BY:
        raise RouteParamError(f"by: one of {', '.join(BY)}")
    return text
