"""Email subscriptions end to end (DESIGN §16, issue 33): a real SMTP server (aiosmtpd) and the real
listen address (StatusServer + build_app) on loopback, SQLite and PostgreSQL.

Must show: an address subscribed by email gets a confirmation mail, and after confirming, a mail for the
next incident update; an unconfirmed address gets nothing more."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy import select

from monitor.alerts.records import Change
from monitor.alerts.scope import Scope
from monitor.http.app import build_app
from monitor.http.health import Health
from monitor.http.server import StatusServer
from monitor.incidents.store import post_update
from monitor.incidents.views import list_incidents
from monitor.storage.models import SubscriberOutboxRow
from monitor.subscriptions.outbox import SubscriberDelivery
from monitor.subscriptions.web import SubscriptionPages
from tests.alerts.conftest import make_config
from tests.alerts.helpers import config_spec
from tests.incidents.rounds import write_round
from tests.incidents.test_drafting import firing
from tests.mailserver import MailServer

READER, LURKER = "reader@example.com", "lurker@example.com"
LINK = re.compile(r"https?://\S+/status/(confirm|unsubscribe)\?token=\S+")


@pytest.fixture
def site(db, tmp_path):
    """(base URL, config holder, mail server): the listen address serving subscriptions on `db`."""
    with MailServer() as mail:
        holder: dict = {}
        pages = SubscriptionPages(db, lambda: holder["config"])
        server = StatusServer("127.0.0.1", 0, build_app(lambda: [], lambda: Health(True, {}), subscriptions=pages))
        server.start()
        base = f"http://127.0.0.1:{server.port}"
        spec = config_spec(models=("m0",)) | {
            "status_site": {"title": "Acme status", "url": base, "publish": "auto"},
            "smtp": {"host": "127.0.0.1", "port": mail.port, "starttls": False, "from": "status@example.com"},
        }
        holder["config"] = make_config(spec, tmp_path)
        try:
            yield base, holder, mail
        finally:
            server.stop()


def links(text: str) -> dict[str, str]:
    return {m.group(1): m.group(0) for m in LINK.finditer(text)}


def deliver(db, config, at: datetime | None = None):
    delivery = SubscriberDelivery(clock=(lambda: at) if at else (lambda: datetime.now(UTC)))
    return delivery.run(db, config)


def test_confirmed_address_gets_the_next_update_and_an_unconfirmed_one_nothing_more(site, db):
    base, holder, mail = site
    config = holder["config"]
    answer = httpx.post(f"{base}/status/subscribe", data={"email": READER})
    assert answer.status_code == 200 and "Check your inbox" in answer.text
    assert answer.headers["content-type"].startswith("text/html") and answer.headers["cache-control"] == "no-store"
    assert httpx.post(f"{base}/status/subscribe", data={"email": LURKER}).status_code == 200

    assert deliver(db, config).sent == 2
    (confirmation,) = mail.to(READER)
    assert confirmation.message["Subject"] == "Confirm your subscription to Acme status"
    found = links(confirmation.text())
    assert set(found) == {"confirm", "unsubscribe"} and found["confirm"].startswith(f"{base}/status/confirm?token=")
    assert confirmation.message["List-Unsubscribe"] == f"<{found['unsubscribe']}>"
    assert found["confirm"] in confirmation.html().replace("&amp;", "&")

    # An altered token, or the unsubscribe token used to confirm, is refused.
    token = found["confirm"].rsplit("=", 1)[1]
    altered = token[:-1] + ("A" if token[-1] != "A" else "B")
    for bad in (altered, found["unsubscribe"].rsplit("=", 1)[1], "1.0.x", ""):
        refused = httpx.get(f"{base}/status/confirm", params={"token": bad})
        assert refused.status_code == 400 and "This link is not valid" in refused.text
    confirmed = httpx.get(found["confirm"])
    assert confirmed.status_code == 200 and "Subscribed" in confirmed.text
    assert "Already subscribed" in httpx.get(found["confirm"]).text

    # The next incident update: the engine's write step drafts (and, publish: auto, publishes) it.
    write_round(db, [Change(firing(scope=Scope("p", "r1", "m0", "short"), rule="slow"))], config, datetime.now(UTC))
    assert deliver(db, config).sent == 1
    (_, update) = mail.to(READER)
    assert update.message["Subject"] == "Investigating: p m0: slow responses (time to first token) (Acme status)"
    assert "We are investigating slow responses" in update.text() and "p/m0" in update.text()
    assert links(update.text())["unsubscribe"] == found["unsubscribe"]  # every message carries it
    assert update.message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert len(mail.to(LURKER)) == 1, "an unconfirmed address gets nothing more"

    # Exactly once: more runs (a second leader, a restart) send nothing again.
    assert deliver(db, config).sent == 0 and deliver(db, config).sent == 0
    assert len(mail.to(READER)) == 2

    # Unsubscribe: the link shows a button (a GET changes nothing), the POST ends it.
    ask = httpx.get(found["unsubscribe"])
    assert ask.status_code == 200 and 'method="post"' in ask.text
    assert httpx.post(found["unsubscribe"]).status_code == 200
    with db.connect() as conn:
        (incident,) = list_incidents(conn)
    with db.begin() as conn:
        post_update(conn, incident.id, "Fixed.", now=datetime.now(UTC), state="resolved")
    assert deliver(db, config).sent == 0
    assert len(mail.to(READER)) == 2 and len(mail.to(LURKER)) == 1


def test_subscribe_attempts_are_validated_and_rate_limited(site, db):
    base, holder, mail = site
    config = holder["config"]
    for data in (
        {"email": "not-an-address"},
        {"email": "a@b.com\r\nBcc: x@y.com"},
        {},
        {"email": READER, "webhook": "https://x.example/"},
    ):
        bad = httpx.post(f"{base}/status/subscribe", data=data)
        assert bad.status_code == 400 and 'role="alert"' in bad.text
    assert "&lt;script&gt;" in httpx.post(f"{base}/status/subscribe", data={"email": "<script>@x"}).text
    for _ in range(3):  # the same address three times: one confirmation mail, and the same page each time
        assert "Check your inbox" in httpx.post(f"{base}/status/subscribe", data={"email": READER}).text
    deliver(db, config)
    assert len(mail.to(READER)) == 1
    # Ten minutes later it may ask again: the new link works, and only it is sent.
    later = datetime.now(UTC) + timedelta(minutes=11)
    pages = SubscriptionPages(db, lambda: config, clock=lambda: later)
    server = StatusServer("127.0.0.1", 0, build_app(lambda: [], lambda: Health(True, {}), subscriptions=pages))
    server.start()
    try:
        assert httpx.post(f"http://127.0.0.1:{server.port}/status/subscribe", data={"email": READER}).status_code == 200
    finally:
        server.stop()
    deliver(db, config, later)
    assert len(mail.to(READER)) == 2
    # The client's own limit: ten attempts in ten minutes (8 made above), then 429.
    codes = [httpx.post(f"{base}/status/subscribe", data={"email": f"x{i}@example.com"}).status_code for i in range(4)]
    assert codes == [200, 200, 429, 429]


def test_no_smtp_no_email_subscriptions(site, db, tmp_path):
    base, holder, _mail = site
    holder["config"] = make_config(config_spec(models=("m0",)), tmp_path)
    answer = httpx.post(f"{base}/status/subscribe", data={"email": READER})
    assert answer.status_code == 503 and "/incidents.atom" in answer.text
    with db.connect() as conn:
        assert conn.execute(select(SubscriberOutboxRow.__table__)).all() == []
