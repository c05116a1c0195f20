"""The render stage (DESIGN §15), pure: an alert's one-line summary, built once from its fields.

Every earlier stage sets values (`value`, `baseline`, `agents`, `attribution`, `facts`); none writes
text. At the end of the round each alert the round touched gets its summary from those values here,
so what a pager shows first always says what the row says, whatever stages ran before.
"""

from __future__ import annotations

from monitor import fmt
from monitor.alerts.attribution import attribution_text
from monitor.alerts.own_path import own_path_text
from monitor.alerts.quorum import seen_from_text
from monitor.alerts.records import RESOLVED, AlertRecord, Facts
from monitor.alerts.scope import AGENT, PROVIDER_REGION
from monitor.units import format_duration

NO_FACTS = Facts()


def format_value(metric: str, value: float | str | None) -> str:
    """`412 ms`, `38.5 tok/s`, `4.2%`: the metric's unit, rounded for reading (monitor.fmt); a change rule's label."""
    if value is None:
        return "n/a"
    return value if isinstance(value, str) else fmt.metric(metric, value)


def render(record: AlertRecord) -> str:
    facts = record.facts or NO_FACTS
    if record.slo is not None:
        return _slo(record, facts)
    kind = record.scope.kind
    if kind == PROVIDER_REGION:
        text = _group(record, facts)
    elif kind == AGENT:
        text = _agent_wide(record, facts)
    else:
        text = _target(record, facts)
    if record.state != RESOLVED:
        return text
    return f"resolved: {text}{' — ' + facts.reason if facts.reason else ''}"


def _target(record: AlertRecord, facts: Facts) -> str:
    scope, metric = record.scope, record.metric
    # A vantage alert names its target; `seen from …` at the end names the agent.
    name = scope.target_key if scope.agent is not None and scope.model is not None else scope.key
    if record.value_text is not None or record.baseline_text is not None:
        text = f"{record.rule}: {metric} of {name} changed from {record.baseline_text or 'n/a'} to {record.value_text or 'n/a'}"
    elif record.state == RESOLVED:
        text = (
            f"{record.rule}: {metric} of {name} resolved at {format_value(metric, record.value)}, "
            f"{facts.reference} {format_value(metric, record.baseline)}"
            f"{peak_text(metric, record.fired_value, record.worst_value)}"
        )
        return text  # the resolution reads as one: no "seen from" tail
    else:
        text = (
            f"{record.rule}: {metric} of {name} is {format_value(metric, record.value)}, "
            f"{facts.reference} {format_value(metric, record.baseline)}{change_text(record.value, record.baseline)}"
        )
    words = [seen_from_text(record.agents, record.agents_clear)] if facts.say_agents and record.agents else []
    if attribution_text(record.attribution):
        words.append(attribution_text(record.attribution))
    if facts.own_path and record.agents:
        words.append(own_path_text(record.agents[0], facts.own_path))
    return f"{text} — {'; '.join(words)}" if words else text


def _group(record: AlertRecord, facts: Facts) -> str:
    scope, metric = record.scope, record.metric
    text = f"{record.rule}: {facts.firing} of {facts.members} targets of {scope.provider} in {scope.region} degraded; "
    if record.value_text is not None:  # a change rule's labels: the most common new and old one
        text += f"{metric} mostly {record.baseline_text or 'n/a'} -> {record.value_text}"
    else:
        text += (
            f"{metric} median {format_value(metric, record.value)}, {facts.reference} "
            f"{format_value(metric, record.baseline)}{change_text(record.value, record.baseline)}"
        )
    if record.state == RESOLVED:
        text += peak_text(metric, record.fired_value, record.worst_value)
    return text


def _agent_wide(record: AlertRecord, facts: Facts) -> str:
    agent = record.scope.agent
    if record.state == RESOLVED:
        return f"{record.rule}: the path from {agent} is normal again"
    # A lone agent's own path (own_path.py) has nobody to compare with: say so rather than "others see it normal".
    others = (
        "other vantage points see them normal"
        if facts.others_clear
        else f"no other vantage point probes them: {agent}'s own path moved, not the providers"
    )
    text = (
        f"{record.rule}: the path from {agent} degraded towards {fmt.counted(len(facts.providers), 'provider')} at once "
        f"({', '.join(facts.providers)}; {fmt.counted(facts.targets, 'target')}); {others}"
    )
    split = attribution_text(record.attribution)
    return f"{text} — {split}" if split else text


def _slo(record: AlertRecord, facts: Facts) -> str:
    key = record.scope.key
    if record.state == RESOLVED:
        return f"SLO {record.slo}: {key} no longer burns its error budget fast enough to alert" + (
            f" ({facts.reason})" if facts.reason else ""
        )
    objective = "" if facts.slo_objective is None else f"{facts.slo_objective * 100:g}%"
    period = "" if facts.slo_period_s is None else f" over {format_duration(facts.slo_period_s)}"
    head = f"SLO {record.slo} ({objective}{period})" if objective else f"SLO {record.slo}"
    left = "" if record.budget_remaining is None else f"; {record.budget_remaining * 100:.0f}% of the budget left"
    rate = "n/a" if record.value is None else f"{record.value:.1f}x"
    factor = "n/a" if record.baseline is None else f"{record.baseline:g}x"
    return f"{head}: {key} burns its error budget at {rate} over {record.burn_window} (alerts at {factor}){left}"


def change_text(value: float | None, baseline: float | None) -> str:
    text = fmt.change(value, baseline)
    return f" ({text})" if text else ""


def peak_text(metric: str, fired: float | None, worst: float | None) -> str:
    if fired is None and worst is None:
        return ""
    return f"; fired at {format_value(metric, fired)}, worst {format_value(metric, worst)}"
