"""The signed alert links on the listen address (DESIGN §18): the chart and the one-click silence.

    GET  /alerts/<id>/chart.png?exp=<unix>&sig=<hmac>   the alert's chart, PNG (monitor.alerts.charts)
    GET  /alerts/<id>/silence?exp=<unix>&sig=<hmac>     a confirmation page (HTML, no JavaScript)
    POST /alerts/<id>/silence   (form: exp, sig)         a 1-hour silence of the alert's scope, `created_by: link`

Notifications carry these links (monitor.alerts.signing); an altered or expired signature is
refused with 403, a chart signature never opens a silence. Opening the silence link only shows what
would be silenced (a link preview or a mail scanner fetching it silences nothing); the form posts
the same signed parameters back. A second confirmation finds the silence already there. The
silence is written to the primary database (`engine`); charts are read from `read_engine`. Pages
are never cached and send no Referer: their URLs carry signatures.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, quote

from monitor.alerts.charts import AlertCharts
from monitor.alerts.message import message_of, scope_text
from monitor.alerts.sample import SAMPLE_ALERT_ID
from monitor.alerts.signing import CHART, SILENCE, link_secret, valid
from monitor.alerts.silences import ONE_CLICK, match_for, silence_from_link
from monitor.mail import Templates

log = logging.getLogger(__name__)

PATH = re.compile(r"^/alerts/(\d{1,18})/(chart\.png|silence)$")
MAX_FORM_BYTES = 4096
PRIVATE = [("Cache-Control", "no-store"), ("Referrer-Policy", "no-referrer"), ("X-Content-Type-Options", "nosniff")]
HTML = "text/html; charset=utf-8"


class AlertLinkPages:
    """The WSGI app for /alerts/…; `engine` None (a read-only agent) refuses to silence with a 503."""

    def __init__(
        self,
        read_engine,
        config: Callable[[], Any],
        engine=None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self._read = read_engine
        self._engine = engine
        self._config = config
        self._clock = clock or (lambda: datetime.now(UTC))
        self._charts = AlertCharts(read_engine, config, self._clock)
        self._secret: bytes | None = None
        self._lock = threading.Lock()
        self._templates = Templates("monitor.alerts")

    def secret(self) -> bytes:
        with self._lock:
            if self._secret is None:
                self._secret = link_secret(self._engine or self._read)
            return self._secret

    def __call__(self, environ: dict, start_response: Callable) -> list[bytes]:
        found = PATH.match(environ.get("PATH_INFO", ""))
        method = environ.get("REQUEST_METHOD", "GET")
        if found is None:
            return _answer(start_response, "404 Not Found", "text/plain", b"not found\n")
        alert_id, what = int(found.group(1)), found.group(2)
        allowed = ("GET", "HEAD") if what == "chart.png" else ("GET", "HEAD", "POST")
        if method not in allowed:
            headers = [("Allow", ", ".join(allowed))]
            return _answer(start_response, "405 Method Not Allowed", "text/plain", b"method not allowed\n", headers)
        params = parse_qs(environ.get("QUERY_STRING", ""))
        if method == "POST":
            params = {**params, **_form(environ)}
        exp, sig = (params.get(k, [None])[0] for k in ("exp", "sig"))
        purpose = CHART if what == "chart.png" else SILENCE
        try:
            ok = valid(self.secret(), purpose, alert_id, exp, sig, self._clock())
            if not ok:
                return self._refused(start_response, what, alert_id)
            if what == "chart.png":
                return self._chart(start_response, alert_id, method)
            return self._silence(start_response, alert_id, method, exp or "", sig or "")
        except Exception as exc:  # the database is away: say so, and nothing about it
            log.warning("alert link %s for #%d failed: %s", what, alert_id, type(exc).__name__)
            return _answer(start_response, "503 Service Unavailable", "text/plain", b"try again in a minute\n")

    # ------------------------------------------------------------------ chart
    def _chart(self, start_response: Callable, alert_id: int, method: str) -> list[bytes]:
        png = self._charts.for_alert(alert_id)
        if png is None:
            return _answer(start_response, "404 Not Found", "text/plain", b"no such alert\n")
        cache = [("Cache-Control", "private, max-age=300"), ("X-Content-Type-Options", "nosniff")]
        return _answer(start_response, "200 OK", "image/png", png, cache, head=method == "HEAD")

    # ---------------------------------------------------------------- silence
    def _silence(self, start_response: Callable, alert_id: int, method: str, exp: str, sig: str) -> list[bytes]:
        body = self._charts.body_of(alert_id)
        if body is None:
            return self._page(start_response, "404 Not Found", "No such alert", [f"Alert #{alert_id} is not stored."])
        message = message_of(body)
        match = match_for(body.get("scope") or {})
        page: dict[str, Any] = {"message": message, "match": match, "color": message.color}
        if alert_id == SAMPLE_ALERT_ID:
            words = [
                "This is the sample alert of `firsttoken notify test`: a real alert's link would silence its scope "
                "for one hour from here. Nothing is silenced for a sample."
            ]
            return self._page(start_response, "200 OK", "Silence link of the sample alert", words, **page)
        if match is None:
            words = [f"No silence can name {scope_text(body)}: silence its providers with `firsttoken silence add`."]
            return self._page(start_response, "200 OK", "This alert cannot be silenced by link", words, **page)
        if method != "POST":
            words = [
                f"Confirming silences notifications for {scope_text(body)} for one hour "
                f"(until {self._until()}). Detection goes on underneath; a page that still fires then is sent.",
                "The silence matches:",
            ]
            form = {"action": f"/alerts/{alert_id}/silence?exp={quote(exp)}&sig={quote(sig)}", "exp": exp, "sig": sig}
            return self._page(start_response, "200 OK", "Silence this alert for 1 hour?", words, form=form, **page)
        if self._engine is None:
            words = ["This agent has no writable database: confirm from another, or use `firsttoken silence add`."]
            return self._page(start_response, "503 Service Unavailable", "Cannot silence here", words, **page)
        now = self._clock()
        with self._engine.begin() as conn:
            silence_id, until, new = silence_from_link(conn, match, alert_id=alert_id, rule=str(body["rule"]), now=now)
        if new:
            log.info("alert #%d: one-click silence #%d until %s", alert_id, silence_id, until.isoformat())
        heading = "Silenced for 1 hour" if new else "Already silenced"
        words = [
            f"Silence #{silence_id} mutes notifications for {scope_text(body)} until {_hhmm(until)}.",
            "The silence matches:",
        ]
        notes = [f"`firsttoken silence list` shows it; `firsttoken silence expire {silence_id}` ends it early."]
        return self._page(start_response, "200 OK", heading, words, notes=notes, **page)

    def _until(self) -> str:
        return _hhmm(self._clock() + ONE_CLICK)

    def _refused(self, start_response: Callable, what: str, alert_id: int) -> list[bytes]:
        if what == "chart.png":
            return _answer(start_response, "403 Forbidden", "text/plain", b"this link has expired or is not valid\n")
        words = [
            "This silence link has expired or is not valid (links are signed, and last a day).",
            "Silence from the command line instead: `firsttoken silence add --match provider=…,model=… --for 1h`.",
        ]
        return self._page(start_response, "403 Forbidden", "Link expired or not valid", words)

    def _page(
        self,
        start_response: Callable,
        status: str,
        heading: str,
        paragraphs: list[str],
        *,
        message=None,
        match=None,
        form=None,
        notes=(),
        color: str = "#5b6470",
    ) -> list[bytes]:
        context = {
            "heading": heading,
            "paragraphs": paragraphs,
            "message": message,
            "match": match,
            "form": form,
            "notes": list(notes),
            "color": color,
        }
        html = self._templates.render("silence.html.j2", context).encode()
        return _answer(start_response, status, HTML, html, PRIVATE)


def _hhmm(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%H:%M UTC")


def _form(environ: dict) -> dict[str, list[str]]:
    """An urlencoded form body, at most MAX_FORM_BYTES (a larger one is not ours)."""
    try:
        length = min(int(environ.get("CONTENT_LENGTH") or 0), MAX_FORM_BYTES)
    except ValueError:
        return {}
    raw = environ["wsgi.input"].read(length) if length > 0 else b""
    return parse_qs(raw.decode("utf-8", "replace"))


def _answer(
    start_response: Callable,
    status: str,
    content_type: str,
    body: bytes,
    headers: list[tuple[str, str]] | None = None,
    *,
    head: bool = False,
) -> list[bytes]:
    sent = [("Content-Type", content_type), ("Content-Length", str(len(body))), *(headers or [])]
    start_response(status, sent)
    return [] if head else [body]
