"""What a subscriber receives (DESIGN §16): a confirmation request, or one published incident update.

Mail: text and HTML (monitor.mail, templates in this package), with the signed unsubscribe link in the
body and as `List-Unsubscribe` (one click, RFC 8058), and a Message-ID made from the outbox row, so a
message sent again after a crash is recognisably the same one. Webhook: a JSON body signed like the
alert webhooks (`X-Firsttoken-Signature: sha256=<HMAC of the body>`) with the subscriber's own key,
which its confirmation request carries.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any
from urllib.parse import quote

from monitor import envvars
from monitor.incidents.feed import STATE_WORDS
from monitor.incidents.views import IncidentView, UpdateView
from monitor.mail import Templates, compose
from monitor.subscriptions.tokens import CONFIRM, UNSUBSCRIBE, make_token, webhook_key

STATUS_URL_ENV = envvars.STATUS_URL  # as monitor.http.public reads it
TEMPLATES = Templates(__package__)
CONFIRM_EVENT, UPDATE_EVENT = "subscription.confirm", "incident.update"


@dataclass(frozen=True, slots=True)
class Site:
    title: str
    url: str  # the public base URL, no trailing slash


def site_url(config: Any, fallback: str | None = None, environ: Mapping[str, str] = os.environ) -> str | None:
    """The public base URL links point to: `status_site.url`, else FIRSTTOKEN_STATUS_URL, else `fallback`
    (where the subscriber reached the site)."""
    url = getattr(getattr(config, "status_site", None), "url", None) or (environ.get(STATUS_URL_ENV) or "").strip()
    url = url or fallback
    return url.rstrip("/") if url else None


@dataclass(frozen=True, slots=True)
class Links:
    confirm: str | None
    unsubscribe: str
    status: str


def links_for(site: Site, secret: bytes, subscriber: Any, *, now, confirm: bool) -> Links:
    unsubscribe = make_token(secret, UNSUBSCRIBE, subscriber.id, subscriber.address_key)
    confirm_url = None
    if confirm:
        token = make_token(secret, CONFIRM, subscriber.id, subscriber.address_key, now)
        confirm_url = f"{site.url}/status/confirm?token={quote(token)}"
    return Links(confirm_url, f"{site.url}/status/unsubscribe?token={quote(unsubscribe)}", f"{site.url}/status")


def _context(site: Site, links: Links, **more: Any) -> dict[str, Any]:
    footer = [("Status page", links.status), ("Unsubscribe", links.unsubscribe)]
    return {"site_title": site.title, "site_url": site.url, "links": links, "footer_links": footer, **more}


def _domain(sender: str) -> str:
    return sender.rpartition("@")[2] or "firsttoken.invalid"


def confirm_mail(site: Site, links: Links, *, sender: str, to: str, delivery_id: int) -> EmailMessage:
    return compose(
        TEMPLATES,
        "confirm",
        _context(site, links),
        sender=sender,
        to=to,
        subject=f"Confirm your subscription to {site.title}",
        headers=_unsubscribe_headers(links),
        message_id=f"<firsttoken.subscriber-message.{delivery_id}@{_domain(sender)}>",
    )


def update_mail(
    site: Site, links: Links, incident: IncidentView, update: UpdateView, *, sender: str, to: str, delivery_id: int
) -> EmailMessage:
    state = STATE_WORDS.get(update.state, update.state)
    return compose(
        TEMPLATES,
        "update",
        _context(
            site, links, incident=incident, update=update, state=state, when=update.at.strftime("%Y-%m-%d %H:%M UTC")
        ),
        sender=sender,
        to=to,
        subject=f"{state}: {incident.title} ({site.title})",
        headers=_unsubscribe_headers(links),
        message_id=f"<firsttoken.subscriber-message.{delivery_id}@{_domain(sender)}>",
    )


def _unsubscribe_headers(links: Links) -> dict[str, str]:
    return {"List-Unsubscribe": f"<{links.unsubscribe}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}


def confirm_body(site: Site, links: Links, secret: bytes, subscriber: Any) -> dict[str, Any]:
    """A webhook's confirmation request: GET `confirm_url` to start receiving updates; `signing_key`
    checks the `X-Firsttoken-Signature` of every later message."""
    return {
        "type": CONFIRM_EVENT,
        "site": {"title": site.title, "url": site.url},
        "confirm_url": links.confirm,
        "unsubscribe_url": links.unsubscribe,
        "signing_key": webhook_key(secret, subscriber.id, subscriber.address_key),
    }


def update_body(site: Site, links: Links, incident: IncidentView, update: UpdateView) -> dict[str, Any]:
    return {
        "type": UPDATE_EVENT,
        "site": {"title": site.title, "url": site.url},
        "incident": {
            "id": incident.id,
            "provider": incident.provider,
            "title": incident.title,
            "state": update.state,
            "components": list(incident.components),
            "started_at": _iso(incident.started_at),
            "url": f"{site.url}/status/{incident.provider}",
        },
        "update": {
            "id": update.id,
            "at": _iso(update.at),
            "kind": update.kind,
            "state": update.state,
            "message": update.message,
        },
        "unsubscribe_url": links.unsubscribe,
    }


def _iso(at) -> str | None:
    return at.isoformat().replace("+00:00", "Z") if at is not None else None
