"""/incidents.atom lists our published incidents with their published updates (DESIGN §16)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta

from monitor.alerts.records import Change
from monitor.alerts.scope import Scope
from monitor.http.public import PublicStatus
from monitor.incidents.store import post_update, publish
from tests.alerts.conftest import make_config
from tests.alerts.helpers import config_spec
from tests.incidents.rounds import write_round
from tests.incidents.test_drafting import firing

ATOM = "{http://www.w3.org/2005/Atom}"


def test_the_feed_lists_published_incidents_and_their_published_updates_only(db, tmp_path):
    now = datetime.now(UTC)
    site = {"title": "Acme status", "url": "https://status.example/", "publish": "manual"}
    config = make_config(config_spec(models=("m0",), providers=("p", "q")) | {"status_site": site}, tmp_path)
    for provider in ("p", "q"):
        page = firing(Scope(provider, "r1", "m0", "short"), rule="slow", fired_at=now - timedelta(minutes=9),
                      last_notified_at=now - timedelta(minutes=8))  # fmt: skip
        write_round(db, [Change(page)], config, now - timedelta(minutes=8))
    with db.begin() as conn:
        publish(conn, 1, now - timedelta(minutes=7))  # p's; q's stays a draft
        post_update(conn, 1, "We <b>know</b> why.", now=now - timedelta(minutes=6), state="identified")
    feed = ET.fromstring(PublicStatus(db, lambda: config).handle("/incidents.atom")[2])
    assert feed.find(f"{ATOM}title").text == "Acme status incidents"
    (entry,) = feed.findall(f"{ATOM}entry")
    assert entry.find(f"{ATOM}title").text == "[ongoing] p m0: slow responses (time to first token)"
    assert entry.find(f"{ATOM}id").text == "urn:firsttoken:incidents:incident:1"
    assert entry.find(f"{ATOM}link").get("href") == "https://status.example/status/p"
    content = entry.find(f"{ATOM}content").text  # HTML, escaped once more inside the XML
    assert content.index("Identified") < content.index("Investigating")  # newest first
    assert "We &lt;b&gt;know&lt;/b&gt; why." in content and "<b>" not in content
