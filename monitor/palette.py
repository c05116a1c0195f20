"""Colours: one per provider everywhere, shades of it per model or vantage point (pure).

The dashboard's charts (dashboard/palette.py re-exports this module) and the alert chart PNGs of
notifications (monitor.alerts.chart) pick from here, so a provider, a severity or a resolution is
the same colour on a page, in a Slack message and in a mail.
"""

from __future__ import annotations

import colorsys
from collections.abc import Iterable, Sequence

# Fixed for the providers people know, so OpenAI is the same green on every page and screenshot.
KNOWN = {
    "openai": "#10a37f",
    "anthropic": "#c96442",
    "gemini": "#4285f4",
    "google": "#4285f4",
    "bedrock": "#ff9900",
    "aws": "#ff9900",
    "azure": "#0078d4",
    "mistral": "#7b3fe4",
    "groq": "#e0457b",
    "openrouter": "#6b7280",
    "ollama": "#3b3b3b",
}
# Other providers take these in name order (Tableau 10 minus the colours used above).
FALLBACK = ("#1f77b4", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#9467bd", "#d62728", "#7f7f7f")
NEUTRAL = "#5b6470"
SEVERITY_COLORS = {"page": "#d64545", "ticket": "#f0a202"}  # an alert's severity (others: NEUTRAL)
RESOLVED_COLOR = "#2e9d5b"  # a resolved alert: the dashboard's healthy green
CATEGORICAL = (
    "#4c78a8",
    "#f58518",
    "#54a24b",
    "#e45756",
    "#72b7b2",
    "#b279a2",
    "#eeca3b",
    "#9d755d",
    "#ff9da6",
    "#79706e",
)


def provider_colors(providers: Iterable[str]) -> dict[str, str]:
    out, spare = {}, iter(FALLBACK * 4)
    for name in sorted(set(providers)):
        out[name] = KNOWN.get(name.lower()) or next(spare, NEUTRAL)
    return out


def shade(color: str, index: int, count: int) -> str:
    """The index-th of `count` shades of a colour, from darker to lighter."""
    if count <= 1:
        return color
    r, g, b = (int(color[i : i + 2], 16) / 255 for i in (1, 3, 5))
    h, lightness, s = colorsys.rgb_to_hls(r, g, b)
    lightness = min(0.8, max(0.2, 0.28 + 0.45 * index / (count - 1)))
    r, g, b = colorsys.hls_to_rgb(h, lightness, s)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def series_colors(series: Sequence[tuple[str, str | None]], providers: Iterable[str]) -> dict[str, str]:
    """{label: colour} for (label, provider) series: the provider's colour, shaded per series."""
    base = provider_colors([p for _, p in series if p] + list(providers))
    by_provider: dict[str | None, list[str]] = {}
    for label, provider in series:
        by_provider.setdefault(provider, []).append(label)
    out: dict[str, str] = {}
    spare = iter(FALLBACK * 4)
    if len(by_provider) == 1 and len(series) > 3:
        # One provider, many models: shades of one hue stop being tellable apart; use distinct hues.
        return {label: (CATEGORICAL * 3)[i] for i, (label, _) in enumerate(series)}
    for provider, labels in by_provider.items():
        for i, label in enumerate(labels):
            color = base.get(provider) if provider else next(spare, NEUTRAL)
            out[label] = shade(color, i, len(labels))
    return out


def rgba(color: str, alpha: float) -> str:
    r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"
