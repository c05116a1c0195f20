"""Signed alert links (DESIGN §18): the chart PNG Slack and Teams fetch, and the one-click silence.

    links = AlertLinks("https://firsttoken.internal:9464", secret)
    links.chart_url(42, now)    -> https://…/alerts/42/chart.png?exp=1767225600&sig=…
    links.silence_url(42, now)  -> https://…/alerts/42/silence?exp=1767139200&sig=…
    valid(secret, CHART, 42, "1767225600", sig, now)   -> True until exp, False once altered

The signature is HMAC-SHA256 over `<purpose>\\n<alert id>\\n<exp>` with the server's link secret,
base64url without padding: altering the id, the expiry or the signature fails, and so does a chart
link turned into a silence link (the purpose differs). The secret is FIRSTTOKEN_LINK_SECRET when the
environment sets it (every agent the same, so any serves the links), else a random one made on
first use in the database (`status_secrets`, monitor.storage.secrets), shared by every agent on it.

A chart link lives CHART_TTL (Slack and Teams fetch it when they show the message, and again when
someone scrolls back); a silence link SILENCE_TTL, about as long as a page stays relevant. Each
notification (and each repeat) is signed afresh. Without `public_url` nobody outside can reach the
listen address, so notifications carry neither link (an email still has its chart, inline).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from urllib.parse import urlencode

from sqlalchemy import Engine

from monitor import envvars
from monitor.storage.secrets import stored_secret

SECRET_ENV = envvars.LINK_SECRET
SECRET_NAME = "alert-links"
CHART, SILENCE = "chart", "silence"
CHART_TTL = timedelta(days=7)
SILENCE_TTL = timedelta(hours=24)
MAX_EXP_CHARS = 12  # an epoch second has 10 digits until the year 2286
SIG_CHARS = 43  # 256 bits, base64url, no padding


def link_secret(engine: Engine | None, environ: Mapping[str, str] = os.environ) -> bytes:
    """The key links are signed with: the environment's, else the database's (made once)."""
    given = (environ.get(SECRET_ENV) or "").strip()
    if given:
        return given.encode()
    if engine is None:
        raise LookupError(f"no {SECRET_ENV} and no database to keep a link secret in")
    return stored_secret(engine, SECRET_NAME)


def sign(secret: bytes, purpose: str, alert_id: int, exp: int) -> str:
    digest = hmac.new(secret, f"{purpose}\n{alert_id}\n{exp}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def valid(secret: bytes, purpose: str, alert_id: int, exp: str | None, sig: str | None, now: datetime) -> bool:
    """Is (`exp`, `sig`) a link for `purpose` on this alert, not expired? Checked in constant time."""
    if not exp or not sig or len(exp) > MAX_EXP_CHARS or not exp.isdigit() or len(sig) != SIG_CHARS:
        return False
    if not hmac.compare_digest(sig.encode(), sign(secret, purpose, alert_id, int(exp)).encode()):
        return False
    return now.timestamp() < int(exp)


@dataclass(frozen=True, slots=True)
class AlertLinks:
    """Signs the links of one round's notifications; `base` is the config's `public_url`."""

    base: str
    secret: bytes = field(repr=False)

    def _url(self, alert_id: int, what: str, purpose: str, now: datetime, ttl: timedelta) -> str:
        exp = int((now + ttl).timestamp())
        query = urlencode({"exp": exp, "sig": sign(self.secret, purpose, alert_id, exp)})
        return f"{self.base.rstrip('/')}/alerts/{alert_id}/{what}?{query}"

    def chart_url(self, alert_id: int, now: datetime) -> str:
        return self._url(alert_id, "chart.png", CHART, now, CHART_TTL)

    def silence_url(self, alert_id: int, now: datetime) -> str:
        return self._url(alert_id, "silence", SILENCE, now, SILENCE_TTL)


def alert_links(engine: Engine, config, environ: Mapping[str, str] = os.environ) -> AlertLinks | None:
    """The round's signer, or None when the config has no `public_url` (no link could be followed)."""
    if not getattr(config, "public_url", None):
        return None
    return AlertLinks(str(config.public_url), link_secret(engine, environ))
