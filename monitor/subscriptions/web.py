"""The subscription pages of `run --listen` (DESIGN §16): HTML that works without JavaScript.

    GET  /status/subscribe             a form: an email address, or a webhook URL
    POST /status/subscribe             form field `email` (or `webhook`): a page saying what happens next
    GET  /status/confirm?token=…       the link the confirmation carries: confirmed (or why not)
    GET  /status/unsubscribe?token=…   a page with one button (mail scanners follow links: a GET changes nothing)
    POST /status/unsubscribe?token=…   unsubscribed; also what a mail client's one-click unsubscribe posts

Input is validated (monitor/subscriptions/addresses.py) and bounded (a form body of at most 8 KiB);
each client address gets at most CLIENT_ATTEMPTS subscribe attempts every CLIENT_WINDOW (429), each
subscriber address at most a confirmation every 10 minutes and five a day (monitor/subscriptions/store.py,
the same page whatever happened: it tells nobody who is subscribed). Pages are never cached.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs

from sqlalchemy import Engine

from monitor.mail import Templates
from monitor.subscriptions import store
from monitor.subscriptions.addresses import EMAIL, WEBHOOK, InvalidAddress, email_address, webhook_url
from monitor.subscriptions.messages import site_url
from monitor.subscriptions.tokens import link_secret

log = logging.getLogger(__name__)

PATHS = ("/status/subscribe", "/status/confirm", "/status/unsubscribe")
MAX_FORM_BYTES = 8192
CLIENT_ATTEMPTS = 10
CLIENT_WINDOW_S = 600.0
MAX_CLIENTS_TRACKED = 10_000
TEMPLATES = Templates(__package__)
HTML = "text/html; charset=utf-8"


@dataclass
class ClientLimiter:
    """At most `attempts` per client address in a sliding `window_s` (in memory, per process)."""

    attempts: int = CLIENT_ATTEMPTS
    window_s: float = CLIENT_WINDOW_S
    clock: Callable[[], float] = time.monotonic
    _seen: OrderedDict[str, deque] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def allow(self, client: str) -> bool:
        now = self.clock()
        with self._lock:
            times = self._seen.pop(client, None) or deque()
            while times and now - times[0] > self.window_s:
                times.popleft()
            allowed = len(times) < self.attempts
            if allowed:
                times.append(now)
            self._seen[client] = times
            while len(self._seen) > MAX_CLIENTS_TRACKED:
                self._seen.popitem(last=False)
            return allowed


@dataclass(frozen=True, slots=True)
class Page:
    status: str
    heading: str
    paragraphs: tuple[str, ...] = ()
    form: str | None = None  # subscribe | unsubscribe
    token: str = ""
    value: str = ""


class SubscriptionPages:
    """A WSGI app for PATHS; `engine` must be writable (the primary, not a read replica)."""

    def __init__(
        self,
        engine: Engine,
        config: Callable[[], Any],
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        limiter: ClientLimiter | None = None,
        allow_private_webhooks: bool = False,
    ) -> None:
        self._engine = engine
        self._config = config
        self._clock = clock
        self._limiter = limiter or ClientLimiter()
        self._allow_private = allow_private_webhooks
        self._secret: bytes | None = None

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        path, method = environ.get("PATH_INFO", ""), environ.get("REQUEST_METHOD", "GET").upper()
        query = parse_qs(environ.get("QUERY_STRING", ""), max_num_fields=5)
        token = (query.get("token") or [""])[0]
        try:
            if path == "/status/subscribe":
                page = self._subscribe(environ) if method == "POST" else self._form()
            elif path == "/status/confirm":
                page = self._confirm(token)
            elif path == "/status/unsubscribe":
                page = self._unsubscribe(token) if method == "POST" else self._ask_unsubscribe(token)
            else:
                page = Page("404 Not Found", "Not found")
        except Exception as exc:  # the database is down: say so, and nothing about it
            log.warning("subscription page %s failed: %s", path, type(exc).__name__)
            page = Page("503 Service Unavailable", "Try again later", ("The status site cannot do that right now.",))
        return self._render(start_response, page)

    # ------------------------------------------------------------------ pages
    def _title(self) -> str:
        return getattr(getattr(self._config(), "status_site", None), "title", "Status")

    def _form(self, problem: str | None = None, value: str = "", status: str = "200 OK") -> Page:
        paragraphs = ("Get an email (or a webhook call) for every update of every incident.",)
        return Page(status, "Subscribe to incident updates", (*((problem,) if problem else ()), *paragraphs),
                    form="subscribe", value=value)  # fmt: skip

    def _subscribe(self, environ: dict) -> Page:
        client = environ.get("REMOTE_ADDR", "?")
        if not self._limiter.allow(client):
            return Page("429 Too Many Requests", "Too many attempts", ("Try again in a few minutes.",))
        fields = _form_fields(environ)
        if fields is None:
            return self._form("Send the form (at most 8 KiB).", status="400 Bad Request")
        email, hook = (fields.get("email") or [""])[0].strip(), (fields.get("webhook") or [""])[0].strip()
        if bool(email) == bool(hook):
            return self._form("Enter an email address or a webhook URL (one of them).", status="400 Bad Request")
        config = self._config()
        try:
            if email:
                kind, address = EMAIL, email_address(email)
            else:
                kind, address = WEBHOOK, webhook_url(hook, allow_private=self._allow_private)
        except InvalidAddress as exc:
            return self._form(str(exc), value=email or hook, status="400 Bad Request")
        if kind == EMAIL and getattr(config, "smtp", None) is None:
            return Page("503 Service Unavailable", "Email subscriptions are not available",
                        ("This status site sends no mail. Follow its Atom feed instead: /incidents.atom",))  # fmt: skip
        base = site_url(config, _request_base(environ))
        with self._engine.begin() as conn:
            store.subscribe(conn, kind, address, now=self._clock(), base_url=base)
        # The same page whatever `subscribe` did: nobody learns who is subscribed, or who asked too often.
        if kind == EMAIL:
            return Page("200 OK", "Check your inbox", (
                f"If {address} is not subscribed yet, a confirmation mail is on its way to it.",
                "Open the link in it to start receiving incident updates; nothing is sent before that.",
                "Every message carries a link to unsubscribe.",
            ))  # fmt: skip
        return Page("200 OK", "Confirm the webhook", (
            f"A confirmation request is on its way to {address} (a JSON POST, type subscription.confirm).",
            "Open its confirm_url to start receiving incident updates; its signing_key checks the "
            "X-Firsttoken-Signature of every later call.",
        ))  # fmt: skip

    def _confirm(self, token: str) -> Page:
        with self._engine.begin() as conn:
            outcome = store.confirm(conn, self._link_secret(), token, now=self._clock())
        if outcome == "confirmed":
            return Page("200 OK", "Subscribed", ("You will hear about the next incident update.",
                                                 "Every message carries a link to unsubscribe."))  # fmt: skip
        if outcome == "already":
            return Page("200 OK", "Already subscribed", ("This subscription was confirmed before.",))
        return _invalid_link()

    def _ask_unsubscribe(self, token: str) -> Page:
        with self._engine.connect() as conn:
            row = store.check_unsubscribe(conn, self._link_secret(), token, now=self._clock())
        if row is None:
            return _invalid_link()
        if row.state == store.UNSUBSCRIBED:
            return Page("200 OK", "Unsubscribed", ("This address receives nothing more.",))
        return Page("200 OK", "Unsubscribe?", ("Stop receiving incident updates at this address.",),
                    form="unsubscribe", token=token)  # fmt: skip

    def _unsubscribe(self, token: str) -> Page:
        with self._engine.begin() as conn:
            outcome = store.unsubscribe(conn, self._link_secret(), token, now=self._clock())
        if outcome == "invalid":
            return _invalid_link()
        return Page("200 OK", "Unsubscribed", ("This address receives nothing more.",))

    def _link_secret(self) -> bytes:
        if self._secret is None:
            self._secret = link_secret(self._engine)
        return self._secret

    def _render(self, start_response: Callable, page: Page) -> list[bytes]:
        body = TEMPLATES.render("page.html.j2", {"page": page, "site_title": self._title()}).encode()
        start_response(
            page.status,
            [
                ("Content-Type", HTML),
                ("Content-Length", str(len(body))),
                ("Cache-Control", "no-store"),
                ("X-Content-Type-Options", "nosniff"),
                ("Referrer-Policy", "no-referrer"),  # the token in the URL stays here
                ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'"),
            ],
        )
        return [body]


def _invalid_link() -> Page:
    return Page("400 Bad Request", "This link is not valid",
                ("It may have expired or been changed. Subscribe again to get a new one.",))  # fmt: skip


def _form_fields(environ: dict) -> dict[str, list[str]] | None:
    kind = environ.get("CONTENT_TYPE", "").split(";")[0].strip().lower()
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return None
    if kind != "application/x-www-form-urlencoded" or not 0 < length <= MAX_FORM_BYTES:
        return None
    raw = environ["wsgi.input"].read(length)
    try:
        return parse_qs(raw.decode("utf-8"), max_num_fields=10)
    except (UnicodeDecodeError, ValueError):
        return None


def _request_base(environ: dict) -> str | None:
    host = environ.get("HTTP_HOST") or environ.get("SERVER_NAME")
    return f"{environ.get('wsgi.url_scheme', 'http')}://{host}" if host else None
