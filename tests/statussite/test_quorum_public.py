"""Only what the quorum confirms is public (DESIGN §11, §16), on SQLite and PostgreSQL: one agent's
failures and its vantage or agent alerts move no component, make no incident, colour no bar, in
/status, /status/<provider>, /status.json, the Atom feed and the badges."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from monitor.alerts.records import Change
from monitor.alerts.scope import Scope
from monitor.http.app import build_app
from monitor.http.health import Health
from monitor.http.public import PublicStatus
from monitor.http.server import StatusServer
from monitor.http.statussite.serve import StatusPages
from monitor.http.statussite.source import SiteSource
from monitor.storage.queries import statushistory
from tests.incidents.rounds import write_round
from tests.incidents.test_drafting import firing
from tests.statussite.seed import add_alert, config, probe_minutes

NOW = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)
ATOM = "{http://www.w3.org/2005/Atom}"


class Site:
    """The listen address's public routes over `engine`, at NOW."""

    def __init__(self, engine, cfg) -> None:
        public = PublicStatus(engine, lambda: cfg, clock=lambda: NOW)
        self.public = public
        source = SiteSource(engine, lambda: cfg, public)
        self.pages = StatusPages(source.read, latest=source.latest)  # as ListenAddress wires it
        app = build_app(lambda: [], lambda: Health(True, {}), public.handle, pages=self.pages)
        self.server = StatusServer("127.0.0.1", 0, app)
        self.server.start()
        self.base = f"http://127.0.0.1:{self.server.port}"

    def get(self, path: str) -> httpx.Response:
        return httpx.get(self.base + path, timeout=20)

    def close(self) -> None:
        self.server.stop()


@pytest.fixture
def site_for(db):
    opened = []

    def make(cfg) -> Site:
        opened.append(Site(db, cfg))
        return opened[-1]

    yield make
    for s in opened:
        s.close()


def _components(body: dict) -> dict[str, str]:
    return {c["name"]: c["status"] for c in body["components"]}


def test_one_agents_failures_and_its_vantage_and_agent_alerts_stay_private(db, tmp_path, site_for):
    cfg = config(tmp_path)
    acme_fast = next(t for t in cfg.targets if t.id == "acme/fast@r1:short")
    # The eu agent sees every probe to acme/fast fail for the last 20 minutes; us and ap see none.
    probe_minutes(db, cfg.targets, NOW - timedelta(minutes=20), NOW,
                  ok=lambda target, agent, at: not (target == acme_fast.id and agent == "agent-eu"))  # fmt: skip
    add_alert(db, scope_kind="vantage", provider="acme", model="fast", agent="agent-eu", at=NOW - timedelta(minutes=15))
    add_alert(db, scope_kind="agent", provider=None, agent="agent-eu", metric="ttft_ms", at=NOW - timedelta(minutes=10))
    site = site_for(cfg)

    body = site.get("/status.json").json()
    assert set(_components(body).values()) == {"operational"}, body["components"]
    assert body["incidents"] == [] and body["status"]["indicator"] == "none"
    feed = ET.fromstring(site.get("/incidents.atom").text)
    assert feed.findall(f"{ATOM}entry") == []
    for provider in ("acme", "other"):
        assert "operational" in site.get(f"/badge/{provider}.svg").text
    page = site.get("/status").text
    assert "All Systems Operational" in page and "Active incidents" not in page
    assert "No incident in the last 30 days." in page
    provider_page = site.get("/status/acme").text
    assert "acme: operational" in provider_page and "No incident on acme" in provider_page
    assert "agent-eu" not in provider_page and "agent-eu" not in page  # no agent's name on a public page


def test_what_the_quorum_sees_is_public(db, tmp_path, site_for):
    cfg = config(tmp_path, site={"title": "Acme status", "publish": "auto"})
    # agent-eu and agent-us (two of three: the quorum) see acme/fast fail for the last 20 minutes, and the
    # alert round pages: the quorum's alert, and the incident drafted from it, published at once.
    probe_minutes(db, cfg.targets, NOW - timedelta(minutes=20), NOW,
                  ok=lambda target, agent, at: not (target == "acme/fast@r1:short" and agent in ("agent-eu", "agent-us")))  # fmt: skip
    page = firing(Scope("acme", "r1", "fast", "short"), rule="errors", metric="error_rate",
                  agents=("agent-eu", "agent-us"), fired_at=NOW - timedelta(minutes=15),
                  last_notified_at=NOW - timedelta(minutes=14))  # fmt: skip
    write_round(db, [Change(page)], cfg, NOW - timedelta(minutes=14))
    site = site_for(cfg)
    body = site.get("/status.json").json()
    assert _components(body)["acme/fast"] == "major_outage" and _components(body)["acme"] == "major_outage"
    assert _components(body)["other/fast"] == "operational"
    (incident,) = body["incidents"]  # our published incident, not the alert row
    assert incident["status"] == "investigating" and incident["impact"] == "critical"
    assert [c["name"] for c in incident["components"]] == ["acme/fast"]
    entries = ET.fromstring(site.get("/incidents.atom").text).findall(f"{ATOM}entry")
    assert [e.find(f"{ATOM}title").text.startswith("[ongoing] acme") for e in entries] == [True]
    page = site.get("/status").text
    assert "Major Service Outage" in page and "Active incidents" in page and incident["name"] in page
    provider_page = site.get("/status/acme").text
    assert incident["name"] in provider_page and "Investigating" in provider_page
    for text in (page, provider_page, site.get("/incidents.atom").text, json.dumps(body)):
        assert "agent-eu" not in text and "seen from" not in text  # no agent, no operators' words


def test_a_drafted_incident_waits_for_publish_manual(db, tmp_path, site_for):
    cfg = config(tmp_path, site={"publish": "manual"})
    probe_minutes(db, cfg.targets, NOW - timedelta(minutes=20), NOW, ok=lambda target, agent, at: "fast" not in target)
    page = firing(Scope("acme", "r1", "fast", "short"), rule="errors", metric="error_rate",
                  agents=("agent-eu", "agent-us", "agent-ap"), fired_at=NOW - timedelta(minutes=15),
                  last_notified_at=NOW - timedelta(minutes=14))  # fmt: skip
    write_round(db, [Change(page)], cfg, NOW - timedelta(minutes=14))
    site = site_for(cfg)
    body = site.get("/status.json").json()
    assert _components(body)["acme/fast"] == "major_outage" and body["incidents"] == []  # the state shows; no incident
    assert "Active incidents" not in site.get("/status").text


def test_daily_bars_and_uptime_count_the_quorums_minutes_only(db, tmp_path, site_for):
    cfg = config(tmp_path, site={"title": "Acme status", "history_days": 7})
    yesterday = NOW.replace(hour=0) - timedelta(days=1)

    def ok(target, agent, at):
        if target != "acme/fast@r1:short":
            return True
        if agent == "agent-eu" and at < yesterday:  # eu alone fails acme/fast for days: its path
            return False
        # 10:00-11:00 yesterday: eu and us both see it fail, a real outage of an hour.
        return not (
            agent in ("agent-eu", "agent-us")
            and yesterday + timedelta(hours=10) <= at < yesterday + timedelta(hours=11)
        )

    probe_minutes(db, cfg.targets, NOW - timedelta(days=6, hours=12), NOW, ok=ok, every=timedelta(minutes=5))
    daily = statushistory.daily(
        db, statushistory.day_start(NOW, 7), NOW, [t.id for t in cfg.targets], {"7 d": NOW - timedelta(days=7)}
    )
    row = daily.targets.index("acme/fast@r1:short")
    assert daily.down_h[row].tolist() == pytest.approx([0, 0, 0, 0, 0, 1.0, 0])  # only yesterday's hour
    probed, down = daily.windows["7 d"]
    assert down[row] == pytest.approx(1.0) and probed[row] == pytest.approx(daily.probed_h[row].sum())
    assert daily.down_h.sum() == pytest.approx(1.0)  # no other target lost a minute

    site = site_for(cfg)
    page = site.get("/status/acme").text
    assert "<title>acme status · Acme status</title>" in page
    assert f'data-day="{(yesterday.date()).isoformat()}"><title>' in page
    assert "partial outage. 95.83% available (1 h 00 min down of 24 h 00 min probed)." in page
    assert page.count('class="lv-partial"') == 1  # yesterday's bar on fast; slow's bars are all no downtime


def test_a_minute_two_of_three_agents_saw_fail_is_down_and_one_of_three_is_not(db, tmp_path):
    cfg = config(tmp_path, models=("fast",), providers=("acme",))
    (target,) = cfg.targets

    def ok(_, agent, at):
        minute = int((at - (NOW - timedelta(minutes=10))).total_seconds() // 60)
        return not ((minute < 4 and agent == "agent-eu") or (minute in (6, 7) and agent in ("agent-us", "agent-ap")))

    probe_minutes(db, cfg.targets, NOW - timedelta(minutes=10), NOW, ok=ok, rollup=False)
    live = statushistory.live(db, NOW - timedelta(minutes=10), NOW, [target.id])
    assert live.probed_min.tolist() == [10.0] and live.down_min.tolist() == [2.0]
    assert live.agents.tolist() == [3] and live.ttft_p50_ms.tolist() == [400.0]


def test_a_round_split_over_a_minute_boundary_still_needs_the_quorum(db, tmp_path):
    """The agents probe a target on one schedule, here at :59.9; one agent, a little late, starts in the
    next calendar minute. Its failures alone must not make that minute down (it would be alone in it)."""
    cfg = config(tmp_path, models=("fast",), providers=("acme",))
    (target,) = cfg.targets
    start = NOW - timedelta(minutes=10)
    for agent, lag in {"agent-eu": 0.3, "agent-us": -0.05, "agent-ap": 0.02}.items():
        probe_minutes(db, cfg.targets, start - timedelta(seconds=5.1 - lag), NOW, rollup=False,
                      ok=lambda _, a, at: a != "agent-eu", agents=(agent,))  # fmt: skip
    live = statushistory.live(db, start, NOW, [target.id])
    assert live.down_min.tolist() == [0.0] and live.probed_min.tolist() == [10.0] and live.agents.tolist() == [3]


def test_a_round_still_in_flight_is_not_one_agents_quorum(db, tmp_path):
    """The newest round: the failing agent's probe is written first, the others' are still in flight."""
    cfg = config(tmp_path, models=("fast",), providers=("acme",))
    (target,) = cfg.targets
    probe_minutes(db, cfg.targets, NOW - timedelta(minutes=10), NOW - timedelta(minutes=1), rollup=False)
    probe_minutes(db, cfg.targets, NOW - timedelta(minutes=1), NOW, rollup=False, agents=("agent-eu",),
                  ok=lambda *_: False)  # fmt: skip
    live = statushistory.live(db, NOW - timedelta(minutes=10), NOW, [target.id])
    assert live.down_min.tolist() == [0.0] and live.probed_min.tolist() == [10.0]
