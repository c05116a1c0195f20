"""The status site's pages: what they say (pure view), how they are built (HTML that works without
JavaScript, accessible, escaped), how they are served to a crowd (one render, gzip, ETag, caching),
and `firsttoken status export` writing the same site as files (SQLite and PostgreSQL)."""

from __future__ import annotations

import gzip
import json
import threading
from datetime import UTC, date, datetime, timedelta
from html.parser import HTMLParser

import numpy as np
import pytest
from sqlalchemy import Engine

from monitor.cli import main
from monitor.http import statuspage as sp
from monitor.http.public import PublicStatus, Snapshot
from monitor.http.statussite import view
from monitor.http.statussite.render import SERVED, exported, site_files, site_pages
from monitor.http.statussite.serve import StatusPages, accepts_gzip
from monitor.http.statussite.source import SiteSource, shown
from monitor.incidents.views import IncidentView, UpdateView
from monitor.maintenance.store import add_window
from tests.statussite.seed import config, probe_minutes

NOW = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)


def history(days: int, probed: list[list[float]], down: list[list[float]], p50: list[list[float]]) -> view.History:
    ids = tuple(f"acme/m{i}@r1:short" for i in range(len(probed)))
    first = NOW.date() - timedelta(days=days - 1)
    probed_h, down_h = np.array(probed, dtype=float), np.array(down, dtype=float)
    windows = {"24 h": (probed_h[:, -1], down_h[:, -1]), f"{days} d": (probed_h.sum(axis=1), down_h.sum(axis=1))}
    return view.History(
        ids, tuple(first + timedelta(days=d) for d in range(days)), probed_h, down_h, np.array(p50, dtype=float),
        windows, {"24 h": 24.0, f"{days} d": 24.0 * days},
    )  # fmt: skip


def snapshot(title="Acme's <b>LLM</b> providers", models=("m0",), state=sp.OPERATIONAL, published=(), maintenance=()):
    status = sp.Status(
        {"acme": state}, {("acme", m): state for m in models}, {"acme": 420.0}, {("acme", m): 420.0 for m in models}
    )
    return Snapshot(NOW, status, (), tuple(maintenance), title, None, tuple(published))


def published(iid=7, state="identified", resolved_at=None) -> IncidentView:
    """One of our published incidents, as monitor.incidents reads it back: two published updates."""
    began = NOW - timedelta(minutes=42)
    updates = (
        UpdateView(1, iid, began, "detected", "investigating", "Errors on acme m0 <script>.", True, began, None),
        UpdateView(2, iid, NOW - timedelta(minutes=30), "update", state, "A fix is rolling out.", True, NOW, "ops"),
    )
    return IncidentView(iid, "acme", "acme m0: elevated error rate", "published", state, ("acme/m0",), began,
                        resolved_at, began, NOW, began, 2, None, updates)  # fmt: skip


def site(snap=None, hist=None, days=4, **kw) -> view.Site:
    hist = hist or history(days, [[24, 24, 24, 12]], [[0, 0, 0, 0]], [[400, 410, 405, 400]])
    shown_ = [view.Shown(t, "acme", t.split("/")[1].split("@")[0]) for t in hist.targets]
    return view.build(snap or snapshot(), hist, shown_, history_days=days, **kw)


# ----------------------------------------------------------------------------- what the view says
def test_day_levels_put_slow_apart_from_down():
    assert view.day_level(24, 0, slow=False) == view.OK
    assert view.day_level(24, 0, slow=True) == view.SLOW  # slow is not down
    assert view.day_level(24, 0.5, slow=True) == view.PARTIAL  # 97.9%: downtime outranks slowness
    assert view.day_level(24, 0.02, slow=False) == view.OK  # 99.92%: a minute and a bit
    assert view.day_level(24, 0.1, slow=False) == view.MINOR  # 99.58%
    assert view.day_level(24, 2, slow=False) == view.MAJOR
    assert view.day_level(0, 0, slow=True) == view.NONE


def test_uptime_text_never_rounds_downtime_away():
    assert view.uptime_text(1.0) == "100%" and view.uptime_text(0.99999) == "99.99%"
    assert view.uptime_text(0.95831) == "95.83%" and view.uptime_text(float("nan")) == "—"


def test_bars_say_in_words_what_their_colour_says():
    hist = history(
        4,
        [[24, 24, 24, 24], [24, 24, 24, 24]],
        [[0, 2.0, 0, 0], [0, 0, 0, 0]],
        [[400, 400, 1300, 400], [500, 500, 500, 500]],
    )
    built = site(snapshot(models=("m0", "m1")), hist)
    (provider,) = built.providers
    m0 = provider.models[0]
    assert [b.level for b in m0.bars] == [view.OK, view.MAJOR, view.SLOW, view.OK]
    assert m0.bars[1].text.startswith("Sat 02 May 2026: major outage. 91.66% available (2 h 00 min down of 24 h")
    assert "Slow: median TTFT 1,300 ms, 3.2× its usual 400 ms." in m0.bars[2].text
    # The provider's bar sums its models: 2 h down of 48 h probed (95.8%) is a partial outage.
    assert [b.level for b in provider.summary.bars] == [view.OK, view.PARTIAL, view.SLOW, view.OK]
    assert (
        provider.summary.bars_label == "Last 4 days, one bar a day: 2 no downtime, 1 slow, not down, 1 partial outage."
    )
    assert [(u.window, u.text) for u in m0.uptime] == [("24 h", "100%"), ("4 d", "97.91%")]
    assert m0.spark is not None and "between 400 ms and 1,300 ms" in m0.spark.label


def test_a_latency_slo_marks_a_day_slow_above_its_bound():
    hist = history(3, [[24, 24, 24]], [[0, 0, 0]], [[900, 950, 1100]])
    shown_ = [view.Shown(hist.targets[0], "acme", "m0", ttft_bound_ms=1000.0, slo="chat")]
    built = view.build(snapshot(), hist, shown_, history_days=3)
    bars = built.providers[0].models[0].bars
    assert [b.level for b in bars] == [view.OK, view.OK, view.SLOW]
    assert "over the 1,000 ms bound of SLO chat" in bars[2].text


def test_shown_targets_follow_the_component_globs_and_take_the_tightest_slo_bound(tmp_path):
    cfg = config(
        tmp_path,
        site={"components": ["acme/*"]},
        slos=[
            {"name": "loose", "objective": "99%", "good": {"ttft_ms": {"below": "2s"}}},
            {"name": "tight", "objective": "99%", "match": {"model": "fast"}, "good": {"ttft_ms": {"below": 800}}},
        ],
    )
    got = {s.id: (s.ttft_bound_ms, s.slo) for s in shown(cfg)}
    assert got == {"acme/fast@r1:short": (800.0, "tight"), "acme/slow@r1:short": (2000.0, "loose")}


# ----------------------------------------------------------------------------- the HTML
class Outline(HTMLParser):
    """Landmarks, headings, images' names, scripts and the texts of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def all(self, tag: str) -> list[dict]:
        return [a for t, a in self.tags if t == tag]


def outline(body: bytes) -> Outline:
    parsed = Outline()
    parsed.feed(body.decode())
    return parsed


def test_pages_are_accessible_html_without_javascript_and_escape_what_they_show():
    built = site(snapshot(models=("m0", "m1")), history(3, [[24] * 3, [24] * 3], [[0] * 3] * 2, [[400] * 3] * 2))
    pages = site_pages(built, SERVED)
    assert set(pages) == {"status", "status/acme"}
    for path, page in pages.items():
        html = page.body.decode()
        doc = outline(page.body)
        assert html.startswith("<!doctype html>") and '<html lang="en">' in html
        assert not doc.all("script") and "javascript:" not in html
        assert doc.all("main") and doc.all("header")[0].get("role") == "banner" and doc.all("footer")
        assert doc.all("meta")[1] == {"name": "viewport", "content": "width=device-width, initial-scale=1"}
        assert len(doc.all("h1")) == 1 and doc.all("h2")
        # The title is the config's, escaped everywhere (never markup).
        assert "<b>LLM</b>" not in html and "Acme&#39;s &lt;b&gt;LLM&lt;/b&gt; providers" in html
        for svg in doc.all("svg"):  # every drawing has a name
            assert svg.get("role") == "img" and svg.get("aria-label"), path
        for img in doc.all("img"):
            assert img.get("alt"), path
        assert "How we measure" in html and "quorum" in html
    index = pages["status"].body.decode()
    assert 'href="status/acme"' in index and 'href="status.json"' in index  # relative: /status -> /status/acme
    provider = pages["status/acme"].body.decode()
    assert 'href="../status"' in provider and 'src="../badge/acme.svg"' in provider
    assert provider.count('<rect x="') == 2 * 3  # two models' bars, three days each
    # Text beside each colour: the state in words, the legend's words.
    assert '<span class="state st-operational">operational</span>' in provider
    assert "slow, not down" in provider and "no data" in provider


def test_exported_pages_link_as_files():
    built = site()
    snap = snapshot()
    files = site_files(built, snap, exported("https://status.example.com"))
    assert set(files) == {"index.html", "acme/index.html", "status.json", "incidents.atom", "badge/acme.svg"}
    index = files["index.html"].body.decode()
    assert 'href="acme/index.html"' in index and 'href="incidents.atom"' in index
    assert 'href="../index.html"' in files["acme/index.html"].body.decode()
    assert json.loads(files["status.json"].body)["page"]["name"] == snap.title


def test_the_subscription_form_shows_only_when_mail_is_configured():
    assert "subscribe-email" not in site_pages(site(), SERVED)["status"].body.decode()
    served = site_pages(site(subscribe=True), SERVED)["status"].body.decode()
    assert 'action="status/subscribe"' in served and 'name="email"' in served
    assert (
        "subscribe-email"
        not in site_files(site(subscribe=True), snapshot(), exported(None))["index.html"].body.decode()
    )


def test_published_incidents_with_their_updates_and_maintenance_on_the_pages():
    planned = sp.Maintenance("config:w:1", "Database upgrade", NOW + timedelta(days=1), NOW + timedelta(days=1, hours=1),
                             (("acme", "m0"),))  # fmt: skip
    built = site(snapshot(state=sp.PARTIAL, published=[published()], maintenance=[planned]))
    index = site_pages(built, SERVED)["status"].body.decode()
    assert "Partial System Outage" in index and "Active incidents" in index
    assert "acme m0: elevated error rate" in index and "<strong>Ongoing</strong> since" in index and "42 min" in index
    # Its timeline, newest first, escaped.
    assert index.index("<strong>Identified</strong>") < index.index("<strong>Investigating</strong>")
    assert "Errors on acme m0 &lt;script&gt;." in index and '<li class="imp-partial_outage">' in index
    assert "Scheduled maintenance" in index and "Database upgrade" in index and "05 May 2026 12:00 UTC" in index
    resolved = site(snapshot(published=[published(state="resolved", resolved_at=NOW - timedelta(minutes=5))]))
    page = site_pages(resolved, SERVED)["status"].body.decode()
    assert "Active incidents" not in page and "Resolved; began" in page and "ended 04 May 2026 11:55 UTC" in page
    body = json.loads(
        site_files(built, snapshot(state=sp.PARTIAL, published=[published()]), SERVED)["status.json"].body
    )
    (incident,) = body["incidents"]
    assert (incident["id"], incident["status"], incident["impact"]) == ("fti7", "identified", "major")
    assert [u["status"] for u in incident["incident_updates"]] == ["identified", "investigating"]
    assert incident["components"] == [{"code": body["components"][1]["id"], "name": "acme/m0"}]


# ----------------------------------------------------------------------------- serving a crowd
class FakeSource:
    def __init__(self) -> None:
        self.reads = 0
        self.fail = False
        self.lock = threading.Lock()

    def read(self):
        with self.lock:
            self.reads += 1
        if self.fail:
            raise ConnectionError("database away")
        return snapshot(), site()


def call(app, path="/status", method="GET", **headers):
    environ = {"PATH_INFO": path, "REQUEST_METHOD": method, **{f"HTTP_{k.upper()}": v for k, v in headers.items()}}
    got = {}

    def start_response(status, hdrs):
        got["status"], got["headers"] = status, dict(hdrs)

    body = app(environ, start_response)
    return None if body is None else (got["status"], got["headers"], b"".join(body))


def test_five_hundred_concurrent_requests_cost_one_render():
    source = FakeSource()
    pages = StatusPages(source.read)
    barrier = threading.Barrier(500)
    answers = []

    def client():
        barrier.wait()
        answers.append(call(pages, accept_encoding="gzip")[0])

    threads = [threading.Thread(target=client) for _ in range(500)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == ["200 OK"] * 500 and source.reads == 1 and pages.renders == 1


def test_gzip_etag_cache_control_and_conditional_answers():
    pages = StatusPages(FakeSource().read)
    status, headers, body = call(pages, accept_encoding="gzip, deflate, br")
    assert status == "200 OK" and headers["Content-Encoding"] == "gzip" and headers["Vary"] == "Accept-Encoding"
    assert headers["Cache-Control"] == "public, max-age=10" and headers["Content-Type"].startswith("text/html")
    html = gzip.decompress(body)
    assert b"<!doctype html>" in html and int(headers["Content-Length"]) == len(body) < len(html) / 3
    plain = call(pages)
    assert "Content-Encoding" not in plain[1] and plain[2] == html and plain[1]["ETag"] != headers["ETag"]
    assert call(pages, accept_encoding="gzip", if_none_match=headers["ETag"])[:2][0] == "304 Not Modified"
    assert call(pages, accept_encoding="gzip", if_none_match=headers["ETag"])[2] == b""
    assert call(pages, if_none_match=headers["ETag"])[0] == "200 OK"  # that tag names the gzipped bytes
    assert call(pages, method="HEAD")[2] == b""
    assert call(pages, "/status/acme")[0] == "200 OK"
    assert call(pages, "/status/acme/")[:2] == (
        "301 Moved Permanently",
        {"Location": "/status/acme", "Content-Length": "0"},
    )
    # Not ours: other methods and paths go on to the router (the subscription routes, a 404).
    assert call(pages, "/status/subscribe", method="POST") is None
    assert call(pages, "/status/nobody") is None and call(pages, "/metrics") is None


@pytest.mark.parametrize(("header", "taken"), [("gzip", True), ("gzip;q=0", False), ("br, *", True), ("identity", False), (None, False)])  # fmt: skip
def test_accept_encoding(header, taken):
    assert accepts_gzip(header) is taken


def test_renders_are_shared_for_the_ttl_and_the_last_good_pages_outlive_a_database_outage():
    clock = [0.0]
    source = FakeSource()
    pages = StatusPages(source.read, ttl_s=10, clock=lambda: clock[0])
    first = call(pages)[2]
    clock[0] = 9.9
    assert call(pages)[2] == first and source.reads == 1
    clock[0] = 10.0
    source.fail = True
    assert call(pages)[:1] == ("200 OK",)  # the stale pages, at once; a refresh runs behind
    pages._worker.join(10)
    assert source.reads == 2 and call(pages)[2] == first and source.reads == 2  # one retry per TTL
    broken = FakeSource()  # failing from the start: nothing to fall back on
    broken.fail = True
    status, headers, body = call(StatusPages(broken.read))
    assert status == "503 Service Unavailable" and headers["Retry-After"] == "30" and b"temporarily unavailable" in body


def test_a_crowd_never_waits_for_a_re_render():
    clock = [0.0]
    release = threading.Event()
    source = FakeSource()
    pages = StatusPages(source.read, ttl_s=10, clock=lambda: clock[0])
    call(pages)
    slow_read = source.read

    def slow():
        release.wait(10)
        return slow_read()

    pages._read = slow
    clock[0] = 30.0
    answers = [call(pages)[0] for _ in range(50)]  # all while the re-render waits on the database
    assert answers == ["200 OK"] * 50 and pages.renders == 1
    release.set()
    pages._worker.join(10)
    assert pages.renders == 2 and source.reads == 2


def test_pages_too_old_to_show_are_waited_for():
    clock = [0.0]
    source = FakeSource()
    pages = StatusPages(source.read, ttl_s=10, clock=lambda: clock[0], max_stale_s=60)
    call(pages)
    clock[0] = 3600.0  # nobody asked for an hour: the first reader waits for a fresh render
    assert call(pages)[0] == "200 OK" and source.reads == 2 and pages.renders == 2 and pages._worker is None


def test_pages_follow_a_newer_snapshot_at_once():
    """/status.json built a newer snapshot: the next page request renders from it (no TTL to wait)."""
    clock = [0.0]
    token = [object()]
    source = FakeSource()

    def read():
        _, built = source.read()
        return token[0], built

    pages = StatusPages(read, ttl_s=10, clock=lambda: clock[0], latest=lambda: token[0])
    call(pages)
    clock[0] = 1.0
    assert call(pages)[0] == "200 OK" and source.reads == 1  # nothing newer
    token[0] = object()  # a /status.json request built a new snapshot
    assert call(pages)[0] == "200 OK" and source.reads == 2 and pages._worker is None  # rendered in the request
    assert call(pages)[0] == "200 OK" and source.reads == 2


# ----------------------------------------------------------------------------- from the database
def test_a_maintenance_window_puts_its_components_under_maintenance(db: Engine, tmp_path):
    cfg = config(tmp_path)
    probe_minutes(db, cfg.targets, NOW - timedelta(minutes=20), NOW, rollup=False,
                  ok=lambda target, agent, at: not target.startswith("acme/"))  # every agent: a real outage  # fmt: skip
    with db.begin() as conn:
        add_window(conn, {"provider": "acme"}, starts_at=NOW - timedelta(minutes=30), ends_at=NOW + timedelta(hours=1),
                   note="Planned upgrade", now=NOW)  # fmt: skip
        add_window(conn, {"model": "fast"}, starts_at=NOW + timedelta(days=2), ends_at=NOW + timedelta(days=2, hours=2),
                   note="Next week's", now=NOW)  # fmt: skip
    public = PublicStatus(db, lambda: cfg, clock=lambda: NOW)
    snap = public.snapshot()
    # The failures fell inside our window: neither up nor down, so the component is under maintenance.
    assert snap.status.models[("acme", "fast")] == sp.MAINTENANCE and snap.status.providers["acme"] == sp.MAINTENANCE
    assert snap.status.providers["other"] == sp.OPERATIONAL and snap.status.indicator == "maintenance"
    body = json.loads(public.handle("/status.json")[2])
    assert body["status"] == {"indicator": "maintenance", "description": "Service Under Maintenance"}
    assert [(m["name"], m["status"], len(m["components"])) for m in body["scheduled_maintenances"]] == [
        ("Planned upgrade", "in_progress", 2),
        ("Next week's", "scheduled", 2),
    ]
    _, built = SiteSource(db, lambda: cfg, public).read()
    index = site_pages(built, SERVED)["status"].body.decode()
    assert "Service Under Maintenance" in index and "Planned upgrade" in index and "(in progress)" in index
    assert "Next week&#39;s" in index


def test_status_export_writes_the_site(db: Engine, tmp_path, monkeypatch, capsys):
    cfg_path = tmp_path / "firsttoken.yaml"
    cfg_path.write_text(
        json.dumps(
            {
                "database": db.url.render_as_string(hide_password=False),
                "providers": {"acme": {"protocol": "openai-chat", "regions": {"r1": "http://127.0.0.1:9/v1"},
                                       "models": ["fast"]}},
                "prompts": {"short": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}},
                "checks": [{"providers": ["acme"], "prompts": ["short"]}],
                "status_site": {"title": "Acme status", "url": "https://status.example.com", "history_days": 30},
            }
        )
    )  # fmt: skip
    monkeypatch.delenv("FIRSTTOKEN_DATABASE_URL", raising=False)
    now = datetime.now(UTC)
    probe_minutes(db, config(tmp_path, models=("fast",), providers=("acme",)).targets, now - timedelta(hours=3), now,
                  every=timedelta(minutes=10))  # fmt: skip
    out = tmp_path / "public"
    assert main(["status", "export", str(out), "--config", str(cfg_path)]) == 0
    assert "wrote 5 files" in capsys.readouterr().out
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "acme/index.html", "badge/acme.svg", "incidents.atom", "index.html", "status.json",
    ]  # fmt: skip
    index = (out / "index.html").read_text()
    assert "<title>Acme status</title>" in index and index.count('<rect x="') == 30
    assert f'data-day="{now.date().isoformat()}"><title>' in index
    status = json.loads((out / "status.json").read_text())
    assert status["page"]["url"] == "https://status.example.com" and status["components"][1]["status"] == "operational"


def test_the_history_days_and_a_date_axis():
    built = site(days=4)
    assert [b.day for b in built.providers[0].summary.bars] == [date(2026, 5, d) for d in (1, 2, 3, 4)]


def test_the_dashboard_reads_the_status_sites_url_from_the_config(tmp_path):
    from dashboard.settings import load_settings

    path = tmp_path / "firsttoken.yaml"
    path.write_text(json.dumps({
        "providers": {"acme": {"protocol": "openai-chat", "regions": {"r1": "http://127.0.0.1:9/v1"}, "models": ["m"]}},
        "prompts": {"p": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}},
        "checks": [{"providers": ["acme"], "prompts": ["p"]}],
        "status_site": {"url": "https://status.example.com/"},
    }))  # fmt: skip
    assert load_settings({"FIRSTTOKEN_CONFIG": str(path)}).status_site_url == "https://status.example.com/"
