"""Signed links (DESIGN §16): confirm and unsubscribe, HMAC-SHA256 with the server's secret.

The secret is FIRSTTOKEN_STATUS_SECRET when the environment sets it (every agent the same: any of
them serves the links), else a random one made on first use and kept in `status_secrets`, so all
agents on one database share it (monitor.storage.secrets, as the alert links' key is). It is never
logged, never in a page, never in an error.

A token is `<subscriber id>.<issued, hex seconds>.<MAC>`, the MAC over the purpose, those two and the
subscriber's address: altering any part, or using a confirm token to unsubscribe (or for another
address), fails. Confirm tokens expire after CONFIRM_TTL; unsubscribe tokens (issued 0) never do, so
an old mail's link still works. A webhook subscriber's signing key is derived the same way.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine

from monitor import envvars
from monitor.storage.secrets import stored_secret

SECRET_ENV = envvars.STATUS_SECRET
SECRET_NAME = "links"
CONFIRM, UNSUBSCRIBE, WEBHOOK_KEY = "confirm", "unsubscribe", "webhook-signing"
CONFIRM_TTL = timedelta(days=7)
MAC_CHARS = 32  # 192 bits of the MAC, base64url
MAX_TOKEN_CHARS = 80


def link_secret(engine: Engine, environ: Mapping[str, str] = os.environ) -> bytes:
    """The key links are signed with: the environment's, else the database's (made once, race-free)."""
    given = (environ.get(SECRET_ENV) or "").strip()
    return given.encode() if given else stored_secret(engine, SECRET_NAME)


def _mac(secret: bytes, purpose: str, body: str, address_key: str) -> str:
    digest = hmac.new(secret, f"{purpose}\n{body}\n{address_key}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode()[:MAC_CHARS]


def make_token(
    secret: bytes, purpose: str, subscriber_id: int, address_key: str, issued: datetime | None = None
) -> str:
    body = f"{subscriber_id}.{int(issued.timestamp()) if issued else 0:x}"
    return f"{body}.{_mac(secret, purpose, body, address_key)}"


@dataclass(frozen=True, slots=True)
class Token:
    subscriber_id: int
    issued: datetime | None
    body: str
    mac: str

    def valid(self, secret: bytes, purpose: str, address_key: str, now: datetime, ttl: timedelta | None = None) -> bool:
        if not hmac.compare_digest(self.mac, _mac(secret, purpose, self.body, address_key)):
            return False
        if ttl is None:
            return True
        return self.issued is not None and self.issued <= now + timedelta(minutes=5) and now - self.issued <= ttl


def read_token(text: str | None) -> Token | None:
    """The token's parts, unchecked (None when it is not even shaped like one)."""
    if not text or len(text) > MAX_TOKEN_CHARS:
        return None
    parts = text.split(".")
    if len(parts) != 3 or not parts[0].isdigit() or len(parts[2]) != MAC_CHARS:
        return None
    try:
        seconds = int(parts[1], 16)
    except ValueError:
        return None
    issued = datetime.fromtimestamp(seconds, UTC) if seconds else None
    return Token(int(parts[0]), issued, f"{parts[0]}.{parts[1]}", parts[2])


def webhook_key(secret: bytes, subscriber_id: int, address_key: str) -> str:
    """The key a webhook subscriber checks our signature with (sent in its confirmation request)."""
    return hmac.new(secret, f"{WEBHOOK_KEY}\n{subscriber_id}\n{address_key}".encode(), hashlib.sha256).hexdigest()
