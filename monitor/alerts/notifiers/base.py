"""The one small interface every notifier implements, and the HTTP edge they share.

    notifier.send(body, event="firing", delivery_id="42")   # returns, or raises DeliveryError

`body` is the stored webhook body (monitor.alerts.payload). A notifier never
retries by itself: the outbox decides when to try again, from `retryable`.
Error messages are what ends up in logs and in the outbox's `last_error`, so
they name the host only (URLs carry tokens) and pass through `redact`.

The notifiers that POST JSON themselves (webhook, pagerduty, alertmanager) are `HttpNotifier`s:
one client each (or the caller's), the config's `timeout`, the secrets to keep out of errors, and
`post`'s classification of what went wrong. Only what they send, and where, is their own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol
from urllib.parse import parse_qsl, unquote, urlsplit

import httpx

from monitor import __version__
from monitor.redact import host_of, redact

USER_AGENT = f"firsttoken/{__version__}"
ERROR_EXCERPT_CHARS = 200
# Worth another try later: the receiver is busy, rate limiting, or broken for now.
RETRYABLE_STATUS = frozenset({408, 425, 429})
_MIN_PIECE = 6  # shorter URL pieces are words like "hooks", not tokens


class DeliveryError(Exception):
    """A send that did not go through; `retryable` False means trying again cannot help (a 400)."""

    def __init__(self, message: str, *, retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable


class Notifier(Protocol):
    name: str

    def send(self, body: Mapping[str, Any], *, event: str, delivery_id: str) -> str | None:
        """Deliver, or raise DeliveryError; returns what the receiver answered (`HTTP 200`), or None."""
        ...

    def close(self) -> None: ...


def _no_chart(body: Mapping[str, Any]) -> bytes | None:
    return None


@dataclass(frozen=True, slots=True)
class Context:
    """What a notifier may need beyond its own entry: the config's `smtp:` (the `email` notifier), and
    the alert's chart as PNG bytes (monitor.alerts.charts; None when it cannot be drawn)."""

    smtp: Any = None
    chart: Callable[[Mapping[str, Any]], bytes | None] = _no_chart


NO_CONTEXT = Context()


def answered(response: httpx.Response) -> str:
    """`HTTP 202`: what `firsttoken notify test` reports of a receiver's answer."""
    return f"HTTP {response.status_code}"


def url_secrets(url: str) -> set[str]:
    """The URL and every part of it that could be a credential."""
    pieces = {url}
    try:
        parts = urlsplit(url)
    except ValueError:
        return pieces
    pieces |= {p for p in (parts.username, parts.password) if p}
    pieces |= {unquote(s) for s in re.split(r"[/:@]", parts.netloc + parts.path) if s}
    pieces |= {v for _, v in parse_qsl(parts.query)}
    pieces.discard(parts.hostname or "")
    return {p for p in pieces if len(p) >= _MIN_PIECE}


def post(
    client: httpx.Client,
    url: str,
    content: bytes,
    headers: Mapping[str, str],
    *,
    timeout_s: float,
    secrets: Iterable[str] = (),
    what: str = "POST",
) -> httpx.Response:
    """POST and classify: 2xx returns; timeouts, broken connections, 408/425/429 and 5xx are
    retryable DeliveryErrors; any other status is a permanent one."""
    where = host_of(url)
    try:
        response = client.post(url, content=content, headers=dict(headers), timeout=timeout_s)
    except httpx.TimeoutException:
        raise DeliveryError(f"{what} {where}: timed out after {timeout_s:g}s") from None
    except httpx.HTTPError as exc:  # connect refused, connection closed mid-response, TLS...
        detail = redact(str(exc) or type(exc).__name__, secrets)
        raise DeliveryError(f"{what} {where}: {type(exc).__name__}: {detail}") from None
    if 200 <= response.status_code < 300:
        return response
    excerpt = redact(response.text[:ERROR_EXCERPT_CHARS], secrets).strip()
    message = f"{what} {where}: HTTP {response.status_code}" + (f": {excerpt}" if excerpt else "")
    retryable = response.status_code >= 500 or response.status_code in RETRYABLE_STATUS
    raise DeliveryError(message, retryable=retryable)


class HttpNotifier:
    """A notifier that POSTs JSON: `send` builds the body and calls `_post_json` for each URL.

    The config has `name` and `timeout_s`. `secrets` (the config's), and the values the notifier
    itself sends (`own_secrets`), are redacted from every error. A client passed in is the caller's
    to close.
    """

    what: ClassVar[str]  # names the notifier type in errors: "webhook https://host: HTTP 500"

    def __init__(self, config: Any, secrets: Iterable[str] = (), client: httpx.Client | None = None) -> None:
        self.name = config.name
        self._config = config
        self._secrets = (*secrets, *self.own_secrets(config))
        self._client = client or httpx.Client()
        self._owns_client = client is None

    @staticmethod
    def own_secrets(config: Any) -> Iterable[str]:
        """The config's values this notifier sends that authenticate it (a key, a header's value)."""
        return ()

    def _post_json(self, url: str, raw: bytes, headers: Mapping[str, str] | None = None) -> httpx.Response:
        """POST `raw` (JSON) with `headers`; Content-Type and User-Agent are always ours."""
        sent = {**(headers or {}), "Content-Type": "application/json", "User-Agent": USER_AGENT}
        return post(
            self._client, url, raw, sent, timeout_s=self._config.timeout_s, secrets=self._secrets, what=self.what
        )

    def close(self) -> None:
        if self._owns_client:
            self._client.close()
