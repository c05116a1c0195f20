"""Colours for the dashboard: the one palette of monitor.palette (notifications' charts use it too)."""

from monitor.palette import (
    CATEGORICAL,
    FALLBACK,
    KNOWN,
    NEUTRAL,
    RESOLVED_COLOR,
    SEVERITY_COLORS,
    provider_colors,
    rgba,
    series_colors,
    shade,
)

__all__ = [
    "CATEGORICAL",
    "FALLBACK",
    "KNOWN",
    "NEUTRAL",
    "RESOLVED_COLOR",
    "SEVERITY_COLORS",
    "provider_colors",
    "rgba",
    "series_colors",
    "shade",
]
