"""`apprise`: any apprise URL (Slack, Teams, Discord, email, Opsgenie, json://, ...), title + text.

Apprise URLs carry their tokens inside them (`slack://T000/B000/XXXX`), and
apprise logs URLs at debug level. So its logger is kept to itself, failures
are read from the call's own log entries, and every piece of every URL
(user, password, path segments, query values) is redacted from them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import field
from typing import Any, ClassVar

from monitor.alerts.notifiers.base import DeliveryError, url_secrets
from monitor.alerts.render import format_value
from monitor.config.errors import fail, problem
from monitor.config.fields import secret_text, spec
from monitor.config.notifiers import NotifierConfig
from monitor.redact import redact

TIMEOUT_S = 20.0


def _apprise_url(value: str) -> None:
    if "://" not in value:
        fail("not an apprise URL (expected scheme://...)")


@spec(kw_only=True)
class AppriseConfig(NotifierConfig):
    type: ClassVar[str] = "apprise"
    # Apprise URLs carry their tokens (slack://T/B/secret): every one is a secret.
    urls: tuple[secret_text(check=_apprise_url), ...] = field(default=(), repr=False)

    def _finish(self, ctx: Any) -> list[dict]:
        return [] if self.urls else [problem(("urls",), "required: at least one apprise URL")]


def title_and_text(body: Mapping[str, Any]) -> tuple[str, str]:
    status = str(body.get("status", "firing")).upper()
    scope = body.get("scope") or {}
    where = " ".join(f"{k}={v}" for k, v in scope.items() if v is not None)
    metric = str(body.get("metric", ""))
    title = f"[{status}] {body.get('rule')} ({body.get('severity')}) {where}"
    lines = [
        str(body.get("summary") or ""),
        _values_line(body, metric),
        f"started {body.get('started_at')}" + (f", resolved {body['resolved_at']}" if body.get("resolved_at") else ""),
    ]
    if body.get("dashboard_url"):
        lines.append(str(body["dashboard_url"]))
    return title, "\n".join(lines)


def _values_line(body: Mapping[str, Any], metric: str) -> str:
    now = "resolved at" if body.get("status") == "resolved" else "value"
    line = f"{now} {format_value(metric, body.get('value'))}, baseline {format_value(metric, body.get('baseline'))}"
    if body.get("fired_value") is not None:
        line += f"; fired at {format_value(metric, body['fired_value'])}"
    if body.get("worst_value") is not None:
        line += f", worst {format_value(metric, body['worst_value'])}"
    return line


class AppriseNotifier:
    def __init__(self, config: AppriseConfig, secrets: Iterable[str] = ()) -> None:
        import apprise  # ~2 s of plugin loading: only when an apprise notifier is configured

        quiet = logging.getLogger("apprise")
        quiet.propagate = False  # its debug lines print URL paths, i.e. tokens
        if not quiet.handlers:
            quiet.addHandler(logging.NullHandler())
        self.name = config.name
        self._apprise = apprise
        self._secrets = set(secrets)
        for url in config.urls:
            self._secrets |= url_secrets(str(url))
        self._targets = apprise.Apprise()
        for i, url in enumerate(config.urls):
            if not self._targets.add(str(url)):
                raise DeliveryError(f"apprise: urls[{i}] is not a URL apprise understands", retryable=False)

    def send(self, body: Mapping[str, Any], *, event: str, delivery_id: str) -> None:
        title, text = title_and_text(body)
        resolved = body.get("status") == "resolved"
        kind = self._apprise.NotifyType.SUCCESS if resolved else self._apprise.NotifyType.FAILURE
        entries: list[Any] = []
        result = self._targets.notify(
            body=text, title=title, notify_type=kind, timeout=TIMEOUT_S, log_callback=lambda e, _s: entries.append(e)
        )
        if not result:
            problems = [e.message for e in entries if e.level in ("WARNING", "ERROR", "CRITICAL")]
            detail = redact("; ".join(problems) or "delivery failed", self._secrets)
            raise DeliveryError(f"apprise: {detail}")

    def close(self) -> None:
        pass


def create(config: AppriseConfig, secrets: Iterable[str] = ()) -> AppriseNotifier:
    return AppriseNotifier(config, secrets)
