"""`alertmanager`: Prometheus Alertmanager's API v2 (`POST {url}/api/v2/alerts`, a JSON list of alerts).

Alertmanager groups, silences and routes; firsttoken hands it one alert per
notification, labelled `alertname` (the rule), `severity` and the scope.
With several URLs (an HA cluster) every member gets each alert: the members
dedupe among themselves, and a member that is down must not lose the page.

This is the minimal send (one POST per URL, delivered when any member took
it). Re-sending firing alerts every `resend_every_s` so Alertmanager does
not resolve them on its own is the outbox's job, not this module's.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, ClassVar

import httpx
from pydantic import BeforeValidator

from monitor.alerts.notifiers.base import USER_AGENT, DeliveryError, post
from monitor.config.fields import NonEmpty, Url, alias, check_url, seconds, spec
from monitor.config.notifiers import NotifierConfig, Timeout

API_PATH = "/api/v2/alerts"


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


def alerts_body(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The API v2 request for one stored notification body."""
    scope = {k: str(v) for k, v in (body.get("scope") or {}).items() if v is not None}
    alert: dict[str, Any] = {
        "labels": {"alertname": str(body.get("rule")), "severity": str(body.get("severity")), **scope},
        "annotations": {"summary": str(body.get("summary") or ""), "metric": str(body.get("metric") or "")},
        "startsAt": body.get("started_at"),
    }
    if body.get("status") == "resolved" and body.get("resolved_at"):
        alert["endsAt"] = body["resolved_at"]
    if body.get("dashboard_url"):
        alert["generatorURL"] = body["dashboard_url"]
    return [alert]


class AlertmanagerNotifier:
    def __init__(self, config: AlertmanagerConfig, secrets: Iterable[str] = (), client: httpx.Client | None = None):
        self.name = config.name
        self._config = config
        self._secrets = tuple(secrets)
        self._client = client or httpx.Client()
        self._owns_client = client is None

    def send(self, body: Mapping[str, Any], *, event: str, delivery_id: str) -> None:
        raw = json.dumps(alerts_body(body), separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT}
        failures: list[DeliveryError] = []
        for url in self._config.urls:
            try:
                endpoint = url.rstrip("/") + API_PATH
                post(self._client, endpoint, raw, headers, timeout_s=self._config.timeout_s, secrets=self._secrets)
            except DeliveryError as exc:
                failures.append(exc)
        if len(failures) == len(self._config.urls):  # no member has it
            raise DeliveryError("; ".join(map(str, failures)), retryable=any(f.retryable for f in failures))

    def close(self) -> None:
        if self._owns_client:
            self._client.close()


def create(config: AlertmanagerConfig, secrets: Iterable[str] = ()) -> AlertmanagerNotifier:
    return AlertmanagerNotifier(config, secrets)
