"""One-line, human-readable alert summaries (pure): what a pager shows first."""

from __future__ import annotations

from monitor import fmt
from monitor.alerts.scope import Scope


def format_value(metric: str, value: float | str | None) -> str:
    """`412 ms`, `38.5 tok/s`, `4.2%`: the metric's unit, rounded for reading (monitor.fmt); a change rule's label."""
    if value is None:
        return "n/a"
    return value if isinstance(value, str) else fmt.metric(metric, value)


def _name(scope: Scope) -> str:
    """A vantage alert names its target; `seen from …` at the end of the summary names the agent."""
    return scope.target_key if scope.agent is not None and scope.model is not None else scope.key


def change_text(value: float | None, baseline: float | None) -> str:
    text = fmt.change(value, baseline)
    return f" ({text})" if text else ""


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
        return f"{rule}: {metric} of {_name(scope)} changed from {baseline_text or 'n/a'} to {value_text or 'n/a'}"
    return (
        f"{rule}: {metric} of {_name(scope)} is {format_value(metric, value)}"
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


def resolved_target_summary(
    rule: str,
    scope: Scope,
    metric: str,
    value: float | None,
    baseline: float | None,
    fired: float | None,
    worst: float | None,
    reference: str = "baseline",
) -> str:
    """A resolution reads as one: the value it resolved at is labelled so, beside how bad it got
    (an 818 ms resolution against an 867 ms baseline is not an improvement, it is the end of a 1.9 s spell)."""
    return (
        f"{rule}: {metric} of {_name(scope)} resolved at {format_value(metric, value)}"
        f", {reference} {format_value(metric, baseline)}{peak_text(metric, fired, worst)}"
    )


def peak_text(metric: str, fired: float | None, worst: float | None) -> str:
    if fired is None and worst is None:
        return ""
    return f"; fired at {format_value(metric, fired)}, worst {format_value(metric, worst)}"


def resolved_summary(summary: str | None, reason: str = "") -> str:
    text = summary or ""
    if text.startswith("resolved: "):
        return text
    return f"resolved: {text}{' — ' + reason if reason else ''}"
