"""The status site in a real browser: `firsttoken run --listen` probing the simulator over 90 days of
history, Debian's Chromium driven by Playwright (as the dashboard's browser test), JavaScript off.

- /status from the running agent: the title, a component row with its state in words, 90 bars each
  with its day in words; the provider's page one link away; readable at phone width;
- the same site exported (`firsttoken status export DIR`) and opened from file://, its links followed.

Screenshots land in test-artifacts/screenshots/ (kept by CI); with FIRSTTOKEN_DOCS_SCREENSHOTS=1 (`make
screenshots`) also in docs/screenshots/ (status-site.png, status-provider.png) for docs/status-site.md.
`make test` installs Chromium (`make browser-deps`); without it the test skips locally and fails under CI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from benchmarks.status_crowd import seed_history
from monitor.storage import migrate
from monitor.storage.db import make_engine
from tests.dashboard.test_browser import _need_browser, chromium
from tests.net import free_port
from tests.waiting import wait_for

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "screenshots"
DOCS = ROOT / "docs" / "screenshots"
TITLE = "Acme's LLM providers"
MODELS = ("sim:ttft=140:itl=3:tokens=8:jitter=0.1", "sim:ttft=320:itl=6:tokens=6:jitter=0.1", "sim:fault=server_error")
DAYS = 90

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def running(simulator, tmp_path_factory):
    """An agent serving /status over a seeded 90-day history, with one model failing now (a live incident)."""
    _need_browser()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    workdir = tmp_path_factory.mktemp("status-browser")
    url = f"sqlite:///{workdir / 'firsttoken.db'}"
    key = "sk-browser-status"
    providers = {
        "sim": {"protocol": "openai-chat", "api_key": key, "models": list(MODELS),
                "regions": {"eu": simulator.base_url + "/region/eu/v1"}},
        "simcloud": {"protocol": "openai-chat", "api_key": key, "models": list(MODELS[:2]),
                     "regions": {"us": simulator.base_url + "/region/us/v1"}},
    }  # fmt: skip
    errors = {"name": "errors", "metric": "error_rate", "kind": "threshold", "above": 0.5, "window": "5s",
              "min_samples": 2, "for_evaluations": 1}  # fmt: skip
    spec = {
        "database": url,
        "agent": "browser",
        "defaults": {"interval": "1s", "timeout": "5s", "ttft_timeout": "3s"},
        "prompts": {"short": {"messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 8}},
        "providers": providers,
        "checks": [{"providers": ["sim", "simcloud"], "prompts": ["short"]}],
        "alerts": [errors],
        "notifiers": [{"name": "log", "type": "log"}],
        "alerting": {"evaluate_every": "1s", "deliver_every": "1s", "settle": "1s", "group_wait": "1s"},
        "status_site": {"title": TITLE, "history_days": DAYS},
    }
    config = workdir / "firsttoken.yaml"
    config.write_text(json.dumps(spec))
    engine = make_engine(url)
    migrate.upgrade(engine)
    ids = [f"sim/{m}@eu:short" for m in MODELS] + [f"simcloud/{m}@us:short" for m in MODELS[:2]]
    seed_history(engine, ids, DAYS, datetime.now(UTC))
    engine.dispose()
    port = free_port()
    log = open(workdir / "run.log", "w")  # noqa: SIM115  (closed below)
    process = subprocess.Popen(
        [sys.executable, "-m", "monitor", "run", "--config", str(config), "--listen", f"127.0.0.1:{port}"],
        cwd=workdir, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:

        def incident() -> bool:  # on the pages too (rendered every 10 s)
            try:
                body = httpx.get(base + "/status.json", timeout=5).json()
                page = httpx.get(base + "/status", timeout=5).text
            except (httpx.HTTPError, ValueError):
                return False
            return bool(body.get("incidents")) and "Active incidents" in page and "Major Service Outage" in page

        assert wait_for(incident, 90), (workdir / "run.log").read_text()[-3000:]
        yield {"base": base, "config": config, "workdir": workdir}
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


@pytest.fixture(scope="module")
def browser(running):
    with chromium() as launched:
        yield launched


def screenshot(page, name: str, docs: bool = True) -> None:
    path = ARTIFACTS / name
    page.screenshot(path=str(path), full_page=True)
    if docs and os.environ.get("FIRSTTOKEN_DOCS_SCREENSHOTS"):
        from PIL import Image

        with Image.open(path) as image:  # a 256-colour palette, as docs/screenshots.py keeps them
            image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(DOCS / name, optimize=True)


def check_overview(page) -> None:
    assert page.title() == TITLE
    assert page.locator("h1").inner_text() == TITLE
    assert "Major Service Outage" in page.locator(".banner").inner_text()  # the failing model, in words
    rows = page.locator("article.component")
    assert rows.count() == 2
    sim = rows.filter(has=page.locator("h3", has_text="simcloud")).first
    assert sim.locator(".state").first.inner_text() in ("operational", "degraded")
    bars = page.locator("article.component").first.locator("svg.bars rect")
    assert bars.count() == DAYS
    label = page.locator("article.component").first.locator("svg.bars").get_attribute("aria-label")
    assert label.startswith("sim: Last 90 days, one bar a day:")
    day = bars.nth(DAYS - 2).locator("title").text_content()
    assert "available" in day and "probed" in day  # yesterday, in words


def test_status_from_the_running_agent(running, browser):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1100, "height": 1000})
    page = context.new_page()
    try:
        page.goto(running["base"] + "/status")
        check_overview(page)
        assert "Active incidents" in page.content()  # drafted from the quorum's page, published at once
        assert "fault=server_error" in page.locator("ul.incidents > li").first.inner_text()
        screenshot(page, "status-site.png")
        page.get_by_role("link", name="sim", exact=True).click()
        page.wait_for_url("**/status/sim")
        assert page.title() == f"sim status · {TITLE}"
        models = page.locator("article.component")
        assert models.count() == 3 and models.first.locator("svg.bars rect").count() == DAYS
        assert page.locator("svg.spark").count() >= 2  # a TTFT trend per model that answers
        assert "major outage" in page.locator("article.component", has_text="fault=server_error").inner_text()
        screenshot(page, "status-provider.png")
        page.get_by_role("link", name="← All providers").click()
        page.wait_for_url("**/status")
        assert page.title() == TITLE
    finally:
        context.close()


def test_status_fits_a_phone(running, browser):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 375, "height": 800})
    page = context.new_page()
    try:
        for path in ("/status", "/status/sim"):
            page.goto(running["base"] + path)
            width = page.evaluate("() => document.documentElement.scrollWidth")
            assert width <= 375, (path, width)  # no sideways scrolling
        screenshot(page, "status-provider-phone.png", docs=False)
    finally:
        context.close()


def test_the_exported_site_from_disk(running, browser):
    out = running["workdir"] / "public"
    subprocess.run(
        [sys.executable, "-m", "monitor", "status", "export", str(out), "--config", str(running["config"])],
        check=True, capture_output=True, cwd=running["workdir"],
    )  # fmt: skip
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1100, "height": 1000})
    page = context.new_page()
    try:
        page.goto((out / "index.html").as_uri())
        check_overview(page)
        page.get_by_role("link", name="simcloud", exact=True).click()
        page.wait_for_url("**/simcloud/index.html")
        assert page.locator("article.component").count() == 2
        assert page.locator("img[alt^='simcloud: ']").evaluate("img => img.naturalWidth") > 0  # the badge file
        page.get_by_role("link", name="status.json").click()
        page.wait_for_url("**/status.json")
    finally:
        context.close()
