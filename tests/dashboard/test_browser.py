"""A real browser on every page: `firsttoken dashboard`'s Streamlit on loopback, Debian's
Chromium driven by Playwright, no error element anywhere, a screenshot of each page.

Screenshots land in test-artifacts/screenshots/ (ignored by git; CI keeps the folder).
`make test` installs Chromium (`make browser-deps`); without it the test skips locally
and fails under CI.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from dashboard.launch import start_dashboard, wait_until_up
from monitor.storage import migrate
from monitor.storage.db import make_engine
from tests.dashboard.seed import seed
from tests.net import free_port

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
PAGES = ("overview", "trends", "compare", "timeline", "health", "alerts", "samples")
# Rendered: no skeleton left, something drawn (chart, table or message), the script finished.
RENDERED = """() => document.querySelectorAll('[data-testid="stSkeleton"]').length === 0
  && document.querySelectorAll('.js-plotly-plot .main-svg, [data-testid="stDataFrame"], [data-testid="stAlert"],'
     + ' [data-testid="stException"]').length > 0
  && !document.querySelector('[data-testid="stStatusWidget"]')"""

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dashboard_url(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} missing: `make browser-deps` installs it", pytrace=False)
        pytest.skip(f"{CHROMIUM} not installed (make browser-deps)")
    if os.environ.get("CI"):
        import playwright  # noqa: F401  (a dev dependency: CI must run this test, never skip it)
    else:
        pytest.importorskip("playwright")
    url = f"sqlite:///{tmp_path_factory.mktemp('browser') / 'seeded.db'}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    seed(engine)
    engine.dispose()
    port = free_port()
    log = (tmp_path_factory.getbasetemp() / "streamlit.log").open("w")
    process = start_dashboard(None, url, port, stdout=log, stderr=log)
    try:
        assert wait_until_up(port, 90), "Streamlit did not answer on its port"
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=20)
        log.close()


def test_every_page_loads_in_chromium_without_an_error(dashboard_url):
    from playwright.sync_api import sync_playwright

    shutil.rmtree(SCREENSHOTS, ignore_errors=True)
    SCREENSHOTS.mkdir(parents=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 1000})
            for name in PAGES:
                page.goto(f"{dashboard_url}/{name}")
                page.wait_for_function(RENDERED, timeout=120_000)
                page.wait_for_timeout(1500)  # let Plotly finish drawing before the screenshot
                page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
                errors = page.query_selector_all('[data-testid="stException"]')
                assert not errors, f"{name}: {errors[0].inner_text()[:500]}"
                assert page.locator("h1").first.inner_text().strip(), name
        finally:
            browser.close()
    assert sorted(p.stem for p in SCREENSHOTS.glob("*.png")) == sorted(PAGES)
