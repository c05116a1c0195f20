"""What an alert notification says (DESIGN §18), once, for Slack, Teams and email (pure).

    message = message_of(body)      # the stored body (monitor.alerts.payload)
    message.title                   # "PAGE · ttft-regression firing on openai/gpt-4o@us-east:short"
    message.facts                   # (Fact("Scope", …), Fact("Baseline → now", "412 ms → 968 ms (+135%)"), …)
    message.links                   # (Link("Open in dashboard", …), Link("Silence 1 h", …), Link("Runbook", …))

Every renderer lays these out in its own markup (Block Kit, an Adaptive Card, HTML and text mail)
and derives no text of its own, so the three say the same thing in the same words. The facts, in
order: the scope; where it is seen and where not (DESIGN §11); whether it is the network or the
provider; baseline → now (a resolved alert: how long it lasted and its worst value); the route to
take instead (DESIGN §14); the provider's own incident; an SLO's burn and budget (DESIGN §12).
Values are written by monitor.fmt, in the metric's unit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from monitor import fmt
from monitor.alerts.alternative import alternative_text
from monitor.alerts.attribution import attribution_text
from monitor.alerts.payload import from_iso
from monitor.palette import NEUTRAL, RESOLVED_COLOR, SEVERITY_COLORS

DASHBOARD, SILENCE, RUNBOOK = "Open in dashboard", "Silence 1 h", "Runbook"
CHART_HOURS = 6  # the chart's span (monitor.alerts.charts)


@dataclass(frozen=True, slots=True)
class Fact:
    label: str
    value: str


@dataclass(frozen=True, slots=True)
class Link:
    label: str
    url: str


@dataclass(frozen=True, slots=True)
class Message:
    status: str  # firing | resolved
    severity: str
    title: str
    summary: str  # the alert's one-line summary (monitor.alerts.render), as the webhook body has it
    color: str  # the accent: the severity's colour, or green once resolved
    facts: tuple[Fact, ...]
    links: tuple[Link, ...]
    chart_url: str | None
    chart_alt: str
    footer: str

    @property
    def resolved(self) -> bool:
        return self.status == "resolved"


def _utc(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment else fmt.DASH


def scope_text(body: Mapping[str, Any]) -> str:
    """`openai/gpt-4o@us-east:short`, `bedrock in eu-west-1 (every model)`, `the path of agent eu-west` …"""
    scope = body.get("scope") or {}
    provider, model, region, prompt = (scope.get(k) for k in ("provider", "model", "region", "prompt"))
    agent = scope.get("agent")
    if model is not None and provider is not None:
        text = f"{provider}/{model}@{region}:{prompt}"
        if region is None or prompt is None:  # an SLO over a model, or a provider's model
            text = f"{provider}/{model}" + (f"@{region}" if region else "")
    elif model is not None:
        text = f"model {model} on every provider"
    elif provider is not None and region is not None:
        text = f"{provider} in {region} (every model)"
    elif provider is not None:
        text = f"{provider} (every model and region)"
    elif agent is not None:
        return f"the path of agent {agent} (every target it probes)"
    else:
        text = "every target"
    return f"{text}, seen from {agent}" if agent is not None else text


def _value(metric: str, value: Any) -> str:
    return value if isinstance(value, str) else fmt.metric(metric, value)


def _change_fact(body: Mapping[str, Any]) -> Fact:
    metric, value, baseline = str(body.get("metric") or ""), body.get("value"), body.get("baseline")
    if body.get("slo"):
        text = f"burn {fmt.burn(value)} over {body.get('window') or 'its windows'} (pages at {fmt.burn(baseline)})"
        return Fact("Burn rate", text)
    if isinstance(value, str) or isinstance(baseline, str):
        return Fact("Changed", f"{baseline or fmt.DASH} → {value or fmt.DASH}")
    change = fmt.change(value, baseline)
    label = "Baseline → resolved at" if body.get("status") == "resolved" else "Baseline → now"
    text = f"{_value(metric, baseline)} → {_value(metric, value)}" + (f" ({change})" if change else "")
    return Fact(label, f"{metric}: {text}")


def facts_of(body: Mapping[str, Any]) -> tuple[Fact, ...]:
    metric = str(body.get("metric") or "")
    facts = [Fact("Scope", scope_text(body))]
    if body.get("agents"):
        facts.append(Fact("Seen from", fmt.listed(body["agents"])))
        facts.append(Fact("Normal from", fmt.listed(body.get("agents_clear") or [], empty="no other agent")))
    if body.get("attribution"):
        facts.append(Fact("Network or provider", attribution_text(body["attribution"]).capitalize()))
    facts.append(_change_fact(body))
    started, resolved_at = from_iso(body.get("started_at")), from_iso(body.get("resolved_at"))
    if body.get("status") == "resolved":
        lasted = (resolved_at - started).total_seconds() if started and resolved_at else None
        facts.append(Fact("Lasted", f"{fmt.span(lasted)} ({_utc(started)} to {_utc(resolved_at)})"))
        worst = body.get("worst_value")
        if worst is not None or body.get("fired_value") is not None:
            text = f"{_value(metric, worst)} (fired at {_value(metric, body.get('fired_value'))})"
            facts.append(Fact("Worst", text))
    else:
        facts.append(Fact("Started", _utc(started)))
    if "alternative" in body:  # a route's alert (DESIGN §14): the route to take instead, or that none is up
        text = alternative_text(body["alternative"]).removeprefix("consider ") or "no other route is up"
        facts.append(Fact("Alternative route", text))
    if body.get("official_incident"):
        facts.append(Fact("Provider's status page", str(body["official_incident"])))
    if body.get("budget_remaining") is not None:
        facts.append(Fact("Error budget left", fmt.pct(body["budget_remaining"])))
    return tuple(facts)


def links_of(body: Mapping[str, Any]) -> tuple[Link, ...]:
    found = [(DASHBOARD, body.get("dashboard_url")), (SILENCE, body.get("silence_url"))]
    found.append((RUNBOOK, body.get("runbook")))
    return tuple(Link(label, str(url)) for label, url in found if url)


def title_of(body: Mapping[str, Any]) -> str:
    rule, where = body.get("rule") or "alert", scope_text(body)
    if body.get("status") == "resolved":
        return f"RESOLVED · {rule} on {where}"
    return f"{str(body.get('severity') or 'alert').upper()} · {rule} firing on {where}"


def message_of(body: Mapping[str, Any]) -> Message:
    resolved = body.get("status") == "resolved"
    severity = str(body.get("severity") or "")
    metric = str(body.get("metric") or "")
    started = from_iso(body.get("started_at"))
    alert = f"firsttoken alert #{body.get('alert_id')}" if body.get("alert_id") else "firsttoken sample alert"
    return Message(
        status="resolved" if resolved else "firing",
        severity=severity,
        title=title_of(body),
        summary=str(body.get("summary") or ""),
        color=RESOLVED_COLOR if resolved else SEVERITY_COLORS.get(severity, NEUTRAL),
        facts=facts_of(body),
        links=links_of(body),
        chart_url=body.get("chart_url"),
        chart_alt=f"{metric} of {scope_text(body)}, last {CHART_HOURS} hours, one line per vantage point",
        footer=f"{alert} · rule {body.get('rule')} · started {_utc(started)}",
    )
