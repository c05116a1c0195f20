"""One-line, human-readable alert summaries (pure): what a pager shows first."""

from __future__ import annotations

from monitor.alerts.scope import Scope


def format_value(metric: str, value: float | str | None) -> str:
    """`412 ms`, `38.5 tok/s`, `23%`: the metric's unit, rounded for reading."""
    if value is None:
        return "n/a"
    if isinstance(value, str):  # a change rule's label
        return value
    if metric == "error_rate":
        return f"{value * 100:.0f}%"
    if metric == "tps":
        return f"{value:.1f} tok/s"
    return f"{value:.0f} ms" if value >= 10 else f"{value:.1f} ms"


def change_text(value: float | None, baseline: float | None) -> str:
    if value is None or not baseline:
        return ""
    return f" ({(value / baseline - 1) * 100:+.0f}%)"


def target_summary(
    rule: str,
    scope: Scope,
    metric: str,
    value: float | None,
    baseline: float | None,
    reference: str = "baseline",
    value_text: str | None = None,
    baseline_text: str | None = None,
) -> str:
    """`reference` names what `baseline` is: the series' own normal, or a rule's threshold.
    A change rule's values are labels: `served_by of X changed from A to B`."""
    if value_text is not None or baseline_text is not None:
        return f"{rule}: {metric} of {scope.key} changed from {baseline_text or 'n/a'} to {value_text or 'n/a'}"
    return (
        f"{rule}: {metric} of {scope.key} is {format_value(metric, value)}"
        f", {reference} {format_value(metric, baseline)}{change_text(value, baseline)}"
    )


def group_summary(
    rule: str,
    scope: Scope,
    metric: str,
    firing: int,
    members: int,
    value: float | None,
    baseline: float | None,
    reference: str = "baseline",
) -> str:
    return (
        f"{rule}: {firing} of {members} targets of {scope.provider} in {scope.region} degraded; "
        f"{metric} median {format_value(metric, value)}, {reference} {format_value(metric, baseline)}"
        f"{change_text(value, baseline)}"
    )


def resolved_summary(summary: str | None, reason: str = "") -> str:
    text = summary or ""
    if text.startswith("resolved: "):
        return text
    return f"resolved: {text}{' — ' + reason if reason else ''}"
