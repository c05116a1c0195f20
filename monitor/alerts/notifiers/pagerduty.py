"""`pagerduty`: Events API v2 (https://developer.pagerduty.com/docs/events-api-v2/trigger-events/).

One `dedup_key` per alert, the same for its trigger, its repeats and its
resolve: PagerDuty folds repeats into the open incident and the resolve
closes it. The key holds the alert id, so a later alert on the same scope is
a new incident rather than a reopened old one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import field
from typing import Any, ClassVar

from monitor.alerts.notifiers.base import HttpNotifier, answered
from monitor.config.fields import SecretText, Url, alias, spec
from monitor.config.notifiers import NotifierConfig, Timeout
from monitor.sample import target_id

MAX_SUMMARY = 1024  # PagerDuty truncates longer summaries
MAX_DEDUP_KEY = 255
SEVERITIES = {
    "page": "critical",
    "critical": "critical",
    "error": "error",
    "high": "error",
    "ticket": "warning",
    "warning": "warning",
    "warn": "warning",
    "low": "info",
    "info": "info",
}
DEFAULT_SEVERITY = "warning"
DETAIL_KEYS = (
    "alert_id",
    "rule",
    "scope",
    "value",
    "baseline",
    "fired_value",
    "worst_value",
    "started_at",
    "alternative",  # the route to take instead (monitor.alerts.alternative)
)
PAGERDUTY_URL = "https://events.pagerduty.com/v2/enqueue"


@spec(kw_only=True)
class PagerDutyConfig(NotifierConfig):
    type: ClassVar[str] = "pagerduty"
    routing_key: SecretText = field(repr=False)  # the integration key: a secret
    url: Url = PAGERDUTY_URL
    timeout_s: Timeout = alias("timeout", 10.0)


def dedup_key(body: Mapping[str, Any]) -> str:
    scope = body.get("scope") or {}
    where = _scope_text(scope)
    key = f"firsttoken:{body.get('rule')}:{where}:{body.get('alert_id')}"
    if len(key) > MAX_DEDUP_KEY:  # long model ids; keep it stable and unique
        key = f"firsttoken:{body.get('alert_id')}:" + hashlib.sha256(key.encode()).hexdigest()
    return key


def _scope_text(scope: Mapping[str, Any]) -> str:
    provider, region = scope.get("provider"), scope.get("region")
    if scope.get("model") is None:
        return f"{provider}@{region}"
    return target_id(provider, scope.get("model"), region, scope.get("prompt"))


def severity(ours: str) -> str:
    return SEVERITIES.get(str(ours).lower(), DEFAULT_SEVERITY)


def event_body(body: Mapping[str, Any], routing_key: str) -> dict[str, Any]:
    """The Events API v2 request for one stored notification body."""
    scope = body.get("scope") or {}
    resolved = body.get("status") == "resolved"
    event: dict[str, Any] = {
        "routing_key": routing_key,
        "event_action": "resolve" if resolved else "trigger",
        "dedup_key": dedup_key(body),
    }
    if resolved:
        return event  # a resolve needs nothing else; PagerDuty ignores a payload on it
    event["payload"] = {
        "summary": (body.get("summary") or f"{body.get('rule')} firing")[:MAX_SUMMARY],
        "source": _scope_text(scope),
        "severity": severity(body.get("severity", "")),
        "timestamp": body.get("started_at"),
        "component": scope.get("model") or scope.get("provider"),
        "group": f"{scope.get('provider')}@{scope.get('region')}",
        "class": body.get("metric"),
        "custom_details": {k: body.get(k) for k in DETAIL_KEYS},
    }
    event["client"] = "firsttoken"
    if body.get("dashboard_url"):
        event["client_url"] = body["dashboard_url"]
        event["links"] = [{"href": body["dashboard_url"], "text": "firsttoken: this alert on the dashboard"}]
    return event


class PagerDutyNotifier(HttpNotifier):
    what = "pagerduty"

    @staticmethod
    def own_secrets(config: PagerDutyConfig) -> Iterable[str]:
        return (str(config.routing_key),)

    def send(self, body: Mapping[str, Any], *, event: str, delivery_id: str) -> str:
        raw = json.dumps(event_body(body, str(self._config.routing_key)), separators=(",", ":")).encode()
        return answered(self._post_json(self._config.url, raw))


def create(config: PagerDutyConfig, secrets: Iterable[str] = ()) -> PagerDutyNotifier:
    return PagerDutyNotifier(config, secrets)
