"""`alertmanager`: post the alert to Prometheus Alertmanager's API v2 (`POST <url>/api/v2/alerts`).

Alertmanager treats an alert it stops hearing about as resolved, so a firing
alert is re-posted every `resend_every_s` while it fires: the outbox chains
the next `repeat` row when it delivers one (monitor.alerts.outbox), and each
post sets `endsAt` a few resend intervals ahead, as Prometheus does, so the
alert outlives a missed re-post but not a dead sender. A resolution posts
`endsAt` = when it resolved.

Labels identify the alert (the same on every post, or Alertmanager sees a new
one): `alertname` (the rule), `severity`, and the scope's `provider`, `model`,
`region`, `prompt` and `agent` where the scope names one; a wider scope leaves
the label out. Never the sending agent: after a leader failover the same alert
would turn into a second one.

With several URLs (an Alertmanager cluster) each gets every post, as
Prometheus does; a send counts once any of them accepted it.

The module is the whole notifier: its config (`type: alertmanager`), and its send.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, ClassVar

from pydantic import BeforeValidator

from monitor.alerts.alternative import alternative_text
from monitor.alerts.notifiers.base import DeliveryError, HttpNotifier, answered
from monitor.config.fields import NonEmpty, Url, alias, check_url, seconds, spec
from monitor.config.notifiers import NotifierConfig, Timeout

ALERTS_PATH = "/api/v2/alerts"
ENDS_AFTER_RESENDS = 4  # a firing post keeps the alert alive this many resend intervals
SCOPE_LABELS = ("provider", "model", "region", "prompt", "agent")


def _one_or_many(value: Any, info: Any) -> Any:
    """`url:` takes one URL or a list; a single URL's errors are about the key itself."""
    return [check_url(value, info)] if isinstance(value, str) else value


@spec(kw_only=True)
class AlertmanagerConfig(NotifierConfig):
    type: ClassVar[str] = "alertmanager"
    urls: Annotated[
        tuple[Url, ...], BeforeValidator(_one_or_many, json_schema_input_type=str | list[str]), NonEmpty
    ] = alias("url")
    timeout_s: Timeout = alias("timeout", 10.0)
    # Alertmanager resolves an alert it has not heard about for its resolve_timeout (5 m by default).
    resend_every_s: seconds(3600.0) = alias("resend_every", 60.0)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def to_alert(body: Mapping[str, Any], *, now: datetime, resend_every_s: float) -> dict[str, Any]:
    """One alert of the API v2 `postableAlerts` list, from the stored notification body."""
    scope = body.get("scope") or {}
    labels = {"alertname": body["rule"], "severity": body.get("severity") or ""}
    labels.update({k: str(scope[k]) for k in SCOPE_LABELS if scope.get(k)})
    annotations = {
        "summary": body.get("summary") or "",
        "value": _text(body.get("value")),
        "baseline": _text(body.get("baseline")),
    }
    if body.get("official_incident"):
        annotations["official_incident"] = str(body["official_incident"])
    if body.get("alternative"):  # "consider groq/llama-3.1-70b@global: p50 310 ms, 100%"
        annotations["alternative"] = alternative_text(body["alternative"])
    if body.get("dashboard_url"):
        annotations["dashboard_url"] = body["dashboard_url"]
    alert: dict[str, Any] = {"labels": labels, "annotations": {k: v for k, v in annotations.items() if v != ""}}
    if body.get("started_at"):
        alert["startsAt"] = body["started_at"]
    if body.get("status") == "resolved":
        alert["endsAt"] = body.get("resolved_at") or _iso(now)
    else:
        alert["endsAt"] = _iso(now + timedelta(seconds=ENDS_AFTER_RESENDS * resend_every_s))
    if body.get("dashboard_url"):
        alert["generatorURL"] = body["dashboard_url"]
    return alert


class AlertmanagerNotifier(HttpNotifier):
    what = "alertmanager"

    def send(self, body: Mapping[str, Any], *, event: str, delivery_id: str) -> str:
        if not self._config.urls:
            raise DeliveryError("alertmanager: no url configured", retryable=False)
        alert = to_alert(body, now=datetime.now(UTC), resend_every_s=self._config.resend_every_s)
        raw = json.dumps([alert], separators=(",", ":")).encode()
        errors: list[DeliveryError] = []
        answers: list[str] = []
        for url in self._config.urls:
            try:
                answers.append(answered(self._post_json(url.rstrip("/") + ALERTS_PATH, raw)))
            except DeliveryError as exc:
                errors.append(exc)
        if errors and len(errors) == len(self._config.urls):
            message = "; ".join(str(e) for e in errors)
            raise DeliveryError(message, retryable=any(e.retryable for e in errors))
        return ", ".join(answers)


def create(config: AlertmanagerConfig, secrets: Iterable[str] = ()) -> AlertmanagerNotifier:
    return AlertmanagerNotifier(config, secrets)
