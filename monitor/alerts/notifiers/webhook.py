"""`webhook`: POST the DESIGN §5 body as JSON, signed when a secret is set.

Headers: `X-Firsttoken-Signature: sha256=<hex HMAC-SHA256 of the raw body>`
(with `secret`), `X-Firsttoken-Delivery: <outbox id>` (the same on every
retry of one notification, so a receiver can drop a repeat delivery after a
crash between send and bookkeeping) and `X-Firsttoken-Event: firing|repeat|resolved`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable, Mapping
from dataclasses import field
from typing import Any, ClassVar

from monitor.alerts.notifiers.base import HttpNotifier, answered
from monitor.config.fields import Headers, OptionalSecret, Url, alias, empty, spec
from monitor.config.notifiers import NotifierConfig, Timeout

SIGNATURE_HEADER = "X-Firsttoken-Signature"
DELIVERY_HEADER = "X-Firsttoken-Delivery"
EVENT_HEADER = "X-Firsttoken-Event"


@spec(kw_only=True)
class WebhookConfig(NotifierConfig):
    type: ClassVar[str] = "webhook"
    url: Url
    # Secrets (typed so: never echoed, masked everywhere): the HMAC key, and header values (they carry auth).
    secret: OptionalSecret = field(default=None, repr=False)
    headers: Headers = field(default_factory=empty, repr=False, hash=False)
    timeout_s: Timeout = alias("timeout", 10.0)


def encode(body: Mapping[str, Any]) -> bytes:
    """The exact bytes sent, and signed: compact JSON, keys in the body's order."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def signature(secret: str, raw: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()


class WebhookNotifier(HttpNotifier):
    what = "webhook"

    @staticmethod
    def own_secrets(config: WebhookConfig) -> Iterable[str]:
        return (*((config.secret,) if config.secret else ()), *config.headers.values())

    def send(self, body: Mapping[str, Any], *, event: str, delivery_id: str) -> str:
        raw = encode(body)
        headers = {**self._config.headers, DELIVERY_HEADER: delivery_id, EVENT_HEADER: event}
        if self._config.secret:
            headers[SIGNATURE_HEADER] = signature(str(self._config.secret), raw)
        return answered(self._post_json(self._config.url, raw, headers))


def create(config: WebhookConfig, secrets: Iterable[str] = ()) -> WebhookNotifier:
    return WebhookNotifier(config, secrets)
