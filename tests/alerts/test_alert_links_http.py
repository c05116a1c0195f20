"""The signed alert links on a real listen address (DESIGN §18), with the alert engine on a real database.

Two targets fire; their pages carry a chart link and a silence link. The chart link answers a PNG
of the regression; altered, expired or used for the other purpose it is refused. The silence
link opens a confirmation page; confirming it creates a one-hour silence for that target
(`created_by: link`, listed by `firsttoken silence list`), and the following evaluations deliver
nothing more for it while the other target's repeats go on.
"""

from __future__ import annotations

import io
import json
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from PIL import Image, ImageStat
from sqlalchemy import func, select

from monitor.alerts.engine import AlertEngine, EngineOptions
from monitor.alerts.grouping import GroupPolicy
from monitor.alerts.signing import CHART_TTL, AlertLinks, link_secret
from monitor.cli import main
from monitor.http.alertlinks import AlertLinkPages
from monitor.http.app import build_app
from monitor.http.health import Health
from monitor.http.server import StatusServer
from monitor.storage.models import Alert, NotificationOutbox, Silence
from monitor.storage.queries import insert_samples

from .conftest import make_config
from .helpers import T0, config_spec, series

M0, M1 = "p/m0@r1:short", "p/m1@r1:short"
NO_HOLD = GroupPolicy(group_wait_s=0.0, group_wait_intervals=0.0)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self):
        return self.now


@pytest.fixture
def rig(db, tmp_path):
    """The listen address's router serving the alert links, its clock the engine's."""
    clock, holder = Clock(), {}
    pages = AlertLinkPages(db, lambda: holder["config"], db, clock=clock)
    server = StatusServer("127.0.0.1", 0, build_app(lambda: [], lambda: Health(True, {}), alert_links=pages))
    server.start()
    spec = config_spec(models=("m0", "m1", "m2", "m3"))
    spec["alerts"][0]["repeat_interval"] = "1m"
    spec["alerts"][0]["runbook"] = "https://runbooks.example/slow"
    spec["public_url"] = f"http://127.0.0.1:{server.port}"
    holder["config"] = make_config(spec, tmp_path)
    try:
        yield holder["config"], clock, server
    finally:
        server.stop()


def outbox(db) -> list[dict]:
    with db.connect() as conn:
        table = NotificationOutbox.__table__
        return [dict(r._mapping) for r in conn.execute(select(table).order_by(table.c.id))]


def evaluate(engine, db, config, clock, until_s: float, from_s: float = 0.0) -> None:
    t = from_s
    while t <= until_s:
        clock.now = T0 + timedelta(seconds=t)
        engine.evaluate(db, config, now=clock.now)
        t += 10.0


def altered(url: str) -> str:
    query = parse_qs(urlsplit(url).query)
    sig = query["sig"][0]
    return url.replace(sig, sig[:-2] + ("AA" if not sig.endswith("AA") else "BB"))


def test_chart_and_one_click_silence_through_the_listen_address(db, rig, capsys, monkeypatch):
    config, clock, _server = rig
    slow = [100.0] * 6 + [600.0] * 40
    insert_samples(db, series(M0, T0, slow) + series(M1, T0, slow) + series("p/m2@r1:short", T0, [100.0] * 46))
    engine = AlertEngine(EngineOptions(settle_s=0.0, group=NO_HOLD))
    evaluate(engine, db, config, clock, 120)
    firing = {r["payload"]["scope"]["model"]: r["payload"] for r in outbox(db) if r["event"] == "firing"}
    assert set(firing) == {"m0", "m1"}
    page = firing["m0"]
    assert page["runbook"] == "https://runbooks.example/slow"
    assert page["chart_url"].startswith(f"{config.public_url}/alerts/{page['alert_id']}/chart.png?exp=")

    # The chart: a PNG of the regression; altered, expired or spent on the other purpose, refused.
    chart = httpx.get(page["chart_url"], timeout=30)
    assert chart.status_code == 200 and chart.headers["content-type"] == "image/png"
    image = Image.open(io.BytesIO(chart.content))
    assert image.size[0] >= 400 and image.size[1] >= 200
    assert max(ImageStat.Stat(image.convert("RGB")).stddev) > 20  # not blank
    assert httpx.get(altered(page["chart_url"]), timeout=10).status_code == 403
    chart_params = urlsplit(page["chart_url"]).query
    assert httpx.get(f"{config.public_url}/alerts/{page['alert_id']}/silence?{chart_params}").status_code == 403
    clock.now += CHART_TTL
    assert httpx.get(page["chart_url"], timeout=10).status_code == 403
    clock.now -= CHART_TTL
    unknown = AlertLinks(config.public_url, link_secret(db)).chart_url(999, clock.now)
    assert httpx.get(unknown, timeout=10).status_code == 404

    # The silence link: a page to confirm (opening it silences nothing), then the silence.
    confirm = httpx.get(page["silence_url"], timeout=10)
    assert confirm.status_code == 200 and confirm.headers["cache-control"] == "no-store"
    assert '<form method="post"' in confirm.text and "Silence this alert for 1 hour?" in confirm.text
    assert httpx.post(altered(page["silence_url"]), timeout=10).status_code == 403
    with db.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Silence.__table__)).scalar() == 0
    query = parse_qs(urlsplit(page["silence_url"]).query)
    form = {"exp": query["exp"][0], "sig": query["sig"][0]}
    done = httpx.post(f"{config.public_url}/alerts/{page['alert_id']}/silence", data=form, timeout=10)
    assert done.status_code == 200 and "Silenced for 1 hour" in done.text
    again = httpx.post(f"{config.public_url}/alerts/{page['alert_id']}/silence", data=form, timeout=10)
    assert "Already silenced" in again.text  # a second click makes no second silence

    monkeypatch.setenv("FIRSTTOKEN_DATABASE_URL", db.url.render_as_string(hide_password=False))
    monkeypatch.chdir(db.url.database.rsplit("/", 1)[0] if db.dialect.name == "sqlite" else "/tmp")
    capsys.readouterr()
    assert main(["silence", "list", "--all", "--json", "--config", "absent.yaml"]) == 0
    (listed,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert listed["created_by"] == "link" and listed["source"] == "database"  # (the test's clock is in 2025: --all)
    assert listed["match"] == {"provider": "p", "model": "m0", "region": "r1", "prompt": "short"}
    assert listed["ends_at"] == (clock.now + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")

    # The next evaluations deliver nothing for m0 (muted: silence); m1 repeats as before.
    before = len(outbox(db))
    evaluate(engine, db, config, clock, 200, from_s=130)
    new = [(r["event"], r["payload"]["scope"]["model"]) for r in outbox(db)[before:]]
    assert new and all(model == "m1" for _, model in new), new
    with db.connect() as conn:
        muted = conn.execute(select(Alert.__table__.c.muted).where(Alert.__table__.c.id == page["alert_id"])).scalar()
    assert muted == "silence"


def test_the_sample_alerts_silence_link_silences_nothing(db, rig):
    config, clock, _server = rig
    from monitor.alerts.sample import SAMPLE_ALERT_ID

    links = AlertLinks(config.public_url, link_secret(db))
    page = httpx.get(links.silence_url(SAMPLE_ALERT_ID, clock.now), timeout=10)
    assert page.status_code == 200 and "<form" not in page.text and "sample alert" in page.text
    chart = httpx.get(links.chart_url(SAMPLE_ALERT_ID, clock.now), timeout=30)
    assert chart.status_code == 200 and Image.open(io.BytesIO(chart.content)).size[0] >= 400
    assert httpx.put(links.chart_url(SAMPLE_ALERT_ID, clock.now), timeout=10).status_code == 405
