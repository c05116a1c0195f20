"""The weekly report's figures, from plain values (pure): each provider's week against the week before,
a change per figure with an arrow and a word, and one verdict word per provider.

Definitions (the report's method section says the same in words):

- probes: probes measured (cancelled ones left out); error rate: failed probes / probes, any failure.
- uptime: 1 - down hours / probed hours over the provider's targets, by the quorum of vantage points
  (monitor.availability, as the status site counts them), time inside our maintenance windows left out.
- TTFT p50 / p90, TPS p50: quantiles of every ok probe of the provider in the week, from the hourly
  rollups' histograms (within 1.6% of the exact quantile, monitor.storage.histogram).
- spend: the probes' recorded cost (`cost_usd`, priced targets only).

A change is `better` or `worse` when it passes its figure's threshold (THRESHOLDS), `steady` below it;
probes and spend have no better or worse (`more`, `less`). A provider is `worse` when any figure is,
else `better` when any is, else `steady`; `no data` without probes this week, `new` without any the week before.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from monitor import fmt

UP, DOWN, FLAT = "↑", "↓", "→"
EPSILON = 1e-9  # a change of exactly the threshold, computed in floating point, still counts


@dataclass(frozen=True, slots=True)
class WeekFigures:
    """One provider's week."""

    probes: int = 0
    failed: int = 0
    probed_h: float = 0.0  # hours its targets were probed (summed over targets), maintenance left out
    down_h: float = 0.0  # of those, hours down by the quorum
    ttft_p50_ms: float | None = None
    ttft_p90_ms: float | None = None
    tps_p50: float | None = None
    spend_usd: float = 0.0

    @property
    def uptime(self) -> float | None:
        return None if self.probed_h <= 0 else max(0.0, 1.0 - self.down_h / self.probed_h)

    @property
    def error_rate(self) -> float | None:
        return None if self.probes <= 0 else self.failed / self.probes


@dataclass(frozen=True, slots=True)
class Figure:
    key: str  # uptime, ttft_p50_ms ...: the WeekFigures attribute
    label: str
    higher_is: str  # better | worse | neutral
    threshold: float  # a change smaller than this is steady
    relative: bool  # threshold relative to the week before (else in the figure's own unit)
    shown: object  # value -> text


def uptime_text(value: float | None) -> str:
    return fmt.DASH if value is None else ("100%" if value >= 1 else f"{value * 100:.2f}%")


FIGURES = (
    Figure("uptime", "Uptime", "better", 0.0005, False, uptime_text),  # 0.05 percentage points
    Figure("ttft_p50_ms", "TTFT p50", "worse", 0.10, True, fmt.ms),
    Figure("ttft_p90_ms", "TTFT p90", "worse", 0.10, True, fmt.ms),
    Figure("tps_p50", "TPS p50", "better", 0.10, True, fmt.tok_s),
    Figure("error_rate", "Error rate", "worse", 0.005, False, fmt.pct),  # 0.5 percentage points
    Figure("probes", "Probes", "neutral", 0.10, True, fmt.count),
    Figure("spend_usd", "Spend", "neutral", 0.10, True, fmt.usd),
)
THRESHOLDS = {f.key: f.threshold for f in FIGURES}


@dataclass(frozen=True, slots=True)
class Change:
    key: str
    label: str
    now: float | None
    before: float | None
    now_text: str
    before_text: str
    delta_text: str  # +12% / -0.08 pp / empty
    arrow: str  # ↑ ↓ →, or empty when either week has no value
    word: str  # better | worse | steady | more | less | "" (nothing to compare)


def _value(figures: WeekFigures, key: str) -> float | None:
    value = getattr(figures, key)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(value)


def _delta_text(figure: Figure, now: float, before: float) -> str:
    if figure.relative:
        return "" if before == 0 else f"{(now / before - 1) * 100:+.0f}%"
    return f"{(now - before) * 100:+.2f} pp"  # uptime and error rate are fractions


def compare(figure: Figure, now_week: WeekFigures, before_week: WeekFigures) -> Change:
    now, before = _value(now_week, figure.key), _value(before_week, figure.key)
    texts = (figure.shown(now), figure.shown(before))
    if now is None or before is None:
        return Change(figure.key, figure.label, now, before, *texts, "", "", "")
    diff = now - before
    if figure.relative and before == 0:
        moved = now != 0  # from nothing: any value is a change
    else:
        size = abs(diff) / abs(before) if figure.relative else abs(diff)
        moved = diff != 0 and size >= figure.threshold - EPSILON
    arrow = (UP if diff > 0 else DOWN) if moved else FLAT
    if not moved:
        word = "steady"
    elif figure.higher_is == "neutral":
        word = "more" if diff > 0 else "less"
    else:
        word = "better" if (diff > 0) == (figure.higher_is == "better") else "worse"
    return Change(figure.key, figure.label, now, before, *texts, _delta_text(figure, now, before), arrow, word)


def changes(now_week: WeekFigures, before_week: WeekFigures) -> tuple[Change, ...]:
    return tuple(compare(f, now_week, before_week) for f in FIGURES)


def verdict(now_week: WeekFigures, before_week: WeekFigures, found: tuple[Change, ...]) -> str:
    if now_week.probes <= 0:
        return "no data"
    if before_week.probes <= 0:
        return "new"
    words = {c.word for c in found}
    if "worse" in words:
        return "worse"
    return "better" if "better" in words else "steady"


__all__ = ["FIGURES", "THRESHOLDS", "Change", "Figure", "WeekFigures", "changes", "compare", "uptime_text", "verdict"]
