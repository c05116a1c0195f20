"""The notification body (DESIGN §5), built once per event and stored in the outbox.

Every notifier renders from this one dict: the webhook sends it verbatim,
PagerDuty and apprise reshape it, Slack, Teams and email render it through one
message model (monitor.alerts.message). It holds alert data only, never a secret,
so it can sit in the database and be shown to anyone. Its signed links (DESIGN §18:
the chart, the one-click silence) are capabilities on one alert that expire, made
with the server's link secret, which never leaves it (monitor.alerts.signing).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from monitor.alerts.alternative import alternative_text
from monitor.alerts.links import alert_url
from monitor.alerts.records import RESOLVED, RESOLVED_EVENT, AlertRecord
from monitor.alerts.signing import AlertLinks
from monitor.alerts.silences import match_for

BODY_KEYS = (
    "status",
    "alert_id",
    "rule",
    "severity",
    "scope",
    "metric",
    "value",
    "baseline",
    "fired_value",
    "worst_value",
    "started_at",
    "resolved_at",
    "summary",
    "dashboard_url",
    "agents",
    "agents_clear",
    "attribution",
    "runbook",  # DESIGN §18: the rule's (or SLO's) `runbook:` URL
    "chart_url",  # the signed chart PNG (with `public_url`)
    "silence_url",  # the signed one-click silence, while firing (with `public_url`)
)


def iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat().replace("+00:00", "Z")


def from_iso(text: str | None) -> datetime | None:
    """A body's time (`iso`'s text) back as a datetime; None stays None."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None


def build_body(
    record: AlertRecord,
    event: str,
    alert_id: int,
    dashboard_url: str | None,
    *,
    runbook: str | None = None,
    links: AlertLinks | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """The webhook body of one event; `repeat` is a `firing` body sent again.

    `dashboard_url` is the configured base; the body carries the deep link to the
    alert's own view (monitor.alerts.links), which every notifier passes on. `links`
    signs the chart and silence links as of `now`; a resolved alert has nothing to silence,
    nor has a scope no silence can name (an agent's path, an SLO over every target)."""
    resolved = event == RESOLVED_EVENT or record.state == RESOLVED
    signed_at = now or record.last_evaluated_at or record.started_at
    silenceable = links is not None and not resolved and match_for(record.scope.labels()) is not None
    link = alert_url(
        dashboard_url,
        alert_id=alert_id,
        scope=record.scope.labels(),
        started_at=record.started_at,
        resolved_at=record.resolved_at if resolved else None,
    )
    body = {
        "status": "resolved" if resolved else "firing",
        "alert_id": alert_id,
        "rule": record.rule,
        "severity": record.severity,
        "scope": record.scope.labels(),
        "metric": record.metric,
        # A change alert's value and baseline are labels: the new upstream or build, and the old one.
        "value": record.value_text if record.value_text is not None else _finite(record.value),
        "baseline": record.baseline_text if record.baseline_text is not None else _finite(record.baseline),
        "fired_value": _finite(record.fired_value),
        "worst_value": _finite(record.worst_value),
        "started_at": iso(record.started_at),
        "resolved_at": iso(record.resolved_at) if resolved else None,
        "summary": record.summary or "",
        "dashboard_url": link,
        # DESIGN §11: the vantage points where the condition holds and those that see the target normal.
        "agents": list(record.agents),
        "agents_clear": list(record.agents_clear),
        "attribution": record.attribution,
        "runbook": runbook,
        "chart_url": links.chart_url(alert_id, signed_at) if links is not None else None,
        "silence_url": links.silence_url(alert_id, signed_at) if silenceable else None,
    }
    if record.slo is not None:  # DESIGN §12: an SLO burn-rate alert
        body.update(
            slo=record.slo,
            burn_rate=_finite(record.value),
            window=record.burn_window,
            budget_remaining=_finite(record.budget_remaining),
        )
    return body


def with_alternative(body: dict[str, Any], alternative: Mapping[str, Any] | None) -> dict[str, Any]:
    """A route alert's `alternative` (null when no other route is up, and once resolved); a firing
    one's summary ends with it, for every notifier that shows only the summary."""
    firing = body["status"] == "firing"
    body["alternative"] = dict(alternative) if alternative and firing else None
    text = alternative_text(body["alternative"])
    if text:
        body["summary"] = f"{body['summary']}; {text}" if body["summary"] else text
    return body


def _finite(value: float | None) -> float | None:
    # JSON has no NaN or Infinity; a receiver's strict parser would reject the whole page.
    if value is None or value != value or value in (float("inf"), float("-inf")):
        return None
    return round(float(value), 6)
