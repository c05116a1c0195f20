"""A real browser on the dashboard: `firsttoken dashboard`'s Streamlit on loopback, Debian's Chromium
driven by Playwright. One shared setup (CI time matters): a seeded history, then `firsttoken run`
probing the simulator until an alert pages a webhook receiver, then the dashboard over that database.

- the webhook's `dashboard_url` opens the alerting target's page, with the alert marked;
- every page, opened with filters in its URL, shows them applied; reload and back keep to the URL;
- at 1440 and 1024 px no legend covers a chart's title, subplot titles or axis titles (screenshots
  of every page at both widths land in test-artifacts/screenshots/, ignored by git, kept by CI).

`make test` installs Chromium (`make browser-deps`); without it the test skips locally and fails under CI.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import uuid
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from dashboard.launch import start_dashboard, wait_until_up
from monitor.storage import migrate
from monitor.storage.db import make_engine
from tests.alerts.receiver import Receiver
from tests.alerts.service_proc import ServiceProcess
from tests.dashboard.seed import TARGETS, seed
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
PAGES = ("overview", "trends", "compare", "timeline", "target", "health", "alerts", "samples")
WIDTHS = (1440, 1024)
API_KEY = "sk-browser-test-4c1d"
# Rendered: no skeleton left, something drawn (chart, table or message), the script finished.
RENDERED = """() => document.querySelectorAll('[data-testid="stSkeleton"]').length === 0
  && document.querySelectorAll('.js-plotly-plot .main-svg, [data-testid="stDataFrame"], [data-testid="stAlert"],'
     + ' [data-testid="stException"]').length > 0
  && !document.querySelector('[data-testid="stStatusWidget"]')"""
# Pairs (legend, text it covers) on every Plotly chart of the page: titles, subplot titles
# (annotations) and axis titles.
OVERLAPS = """() => {
  const out = [];
  const box = el => el.getBoundingClientRect();
  const meet = (a, b) => a.width > 0 && b.width > 0 && a.left < b.right && b.left < a.right
                         && a.top < b.bottom && b.top < a.bottom;
  for (const plot of document.querySelectorAll('.js-plotly-plot')) {
    const legend = plot.querySelector('.legend .bg') || plot.querySelector('.legend');
    if (!legend) continue;
    const texts = plot.querySelectorAll('.gtitle, .g-xtitle text, .g-ytitle text, .g-x2title text, '
      + '.g-y2title text, .g-x3title text, .g-y3title text, .annotation-text, .xtick text');
    for (const t of texts) {
      if (meet(box(legend), box(t))) out.push(t.textContent);
    }
  }
  return out;
}"""
FAST_RULE = {"name": "slow-first-token", "metric": "ttft_ms", "kind": "threshold", "percentile": 50, "above": 150,
             "window": "2s", "min_samples": 3, "for_evaluations": 2, "resolve_after": 2}  # fmt: skip

pytestmark = pytest.mark.slow


def _need_browser() -> None:
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} missing: `make browser-deps` installs it", pytrace=False)
        pytest.skip(f"{CHROMIUM} not installed (make browser-deps)")
    if os.environ.get("CI"):
        import playwright  # noqa: F401  (a dev dependency: CI must run this test, never skip it)
    else:
        pytest.importorskip("playwright")


@pytest.fixture(scope="module")
def stack(simulator, tmp_path_factory):
    """The seeded history plus a live alert from `firsttoken run`, and the dashboard over them."""
    _need_browser()
    shutil.rmtree(SCREENSHOTS, ignore_errors=True)
    SCREENSHOTS.mkdir(parents=True)
    workdir = tmp_path_factory.mktemp("browser")
    url = f"sqlite:///{workdir / 'firsttoken.db'}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    seed(engine)
    engine.dispose()
    tag = uuid.uuid4().hex[:6]
    hot, cool = f"b-{tag}-hot", f"b-{tag}-cool"
    simulator.set_model(hot, ttft_ms=400, itl_ms=2, output_tokens=5, jitter=0.05)
    simulator.set_model(cool, ttft_ms=20, itl_ms=2, output_tokens=5, jitter=0.05)
    port = free_port()
    with Receiver() as hooks:
        config = workdir / "firsttoken.yaml"
        config.write_text(
            json.dumps(
                {
                    "database": url,
                    "agent": "browser",
                    "dashboard_url": f"http://127.0.0.1:{port}",
                    "defaults": {"interval": "0.5s", "timeout": "10s", "ttft_timeout": "5s"},
                    "prompts": {"short": {"messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 8}},
                    "providers": {
                        "sim": {
                            "protocol": "openai-chat",
                            "api_key": API_KEY,
                            "regions": {"local": simulator.base_url + "/v1"},
                            "models": [hot, cool],
                        }
                    },
                    "checks": [{"providers": ["sim"], "prompts": ["short"]}],
                    "alerts": [FAST_RULE],
                    "notifiers": [{"name": "hooks", "type": "webhook", "url": hooks.url + "/alerts"}],
                }
            )
        )
        with ServiceProcess(config, workdir) as service:
            fired = hooks.wait_for(lambda r: any(b.json()["status"] == "firing" for b in r.accepted), 60)
        assert fired, service.log()[-4000:]
        (body,) = [r.json() for r in hooks.accepted if r.json()["status"] == "firing"]
    log = (workdir / "streamlit.log").open("w")
    process = start_dashboard(str(config), url, port, stdout=log, stderr=log)
    try:
        assert wait_until_up(port, 90), "Streamlit did not answer on its port"
        yield {"base": f"http://127.0.0.1:{port}", "body": body, "hot": f"sim/{hot}@local:short",
               "cool": f"sim/{cool}@local:short"}  # fmt: skip
    finally:
        process.terminate()
        process.wait(timeout=20)
        log.close()


@contextlib.contextmanager
def chromium():
    """Debian's Chromium, driven by Playwright by its path (nothing downloaded); the status site's test too."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def browser(stack):
    with chromium() as launched:
        yield launched


def _open(page, url: str) -> None:
    page.goto(url)
    page.wait_for_function(RENDERED, timeout=120_000)
    page.wait_for_timeout(1500)  # let Plotly finish drawing (and the URL settle)
    errors = page.query_selector_all('[data-testid="stException"]')
    assert not errors, f"{url}: {errors[0].inner_text()[:500]}"


WIDGET_TEXT = r"""label => {
  for (const el of document.querySelectorAll('[data-testid="stWidgetLabel"]')) {
    if (el.innerText.trim() !== label) continue;
    const box = el.closest('[data-testid="stElementContainer"]');
    const pressed = [...box.querySelectorAll('button[role="radio"][aria-checked="true"]')];
    if (pressed.length) return pressed.map(b => b.innerText.trim()).join('|');
    const toggle = box.querySelector('input[type="checkbox"]');
    if (toggle) return toggle.checked ? 'on' : 'off';
    const chips = [...box.querySelectorAll('[aria-label^="Remove "]')];
    if (chips.length) return chips.map(b => b.getAttribute('aria-label').slice(7)).join('|');
    const input = box.querySelector('input');
    return input ? input.value : box.innerText;
  }
  return null;
}"""


def _widget_text(page, label: str) -> str | None:
    """What a widget shows, found by its label: the pressed segment, on/off, the chips, the choice."""
    return page.evaluate(WIDGET_TEXT, label)


def test_the_webhooks_dashboard_url_opens_that_target_with_the_alert_marked(stack, browser):
    body = stack["body"]
    link = body["dashboard_url"]
    path, query = urlsplit(link).path, parse_qs(urlsplit(link).query)
    assert path == "/target" and query["target"] == [stack["hot"]] and query["alert"] == [str(body["alert_id"])]
    assert "to" not in query  # firing: the window runs to whenever the link is opened
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    try:
        _open(page, link)
        page.screenshot(path=str(SCREENSHOTS / "alert-link.png"), full_page=True)
        assert _widget_text(page, "Target") == stack["hot"]
        marked = page.locator(".st-key-marked-alert").inner_text()
        assert f"Alert #{body['alert_id']}: slow-first-token" in marked and "fired at" in marked
        assert "ms" in marked and "worst" in marked
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        mark = f"▼ alert #{body['alert_id']}: slow-first-token"
        notes_js = "() => [...document.querySelectorAll('.js-plotly-plot .annotation-text')].map(e => e.textContent)"
        # Plotly may still be drawing on a loaded machine: wait for the mark (up to 30 s), then assert on what is drawn.
        with contextlib.suppress(PlaywrightTimeout):
            page.wait_for_function(f"mark => ({notes_js})().includes(mark)", arg=mark, timeout=30_000)
        notes = page.evaluate(notes_js)
        assert mark in notes, notes
        page.get_by_text("Say hi.").first.wait_for(timeout=30_000)  # the settings, at the page's end
        text = page.locator("[data-testid='stMain']").first.inner_text()
        assert stack["cool"] not in text and "claude-3-5-haiku" not in text  # that target, not the others
        assert "openai-chat" in text and "0.5 s" in text  # its settings: protocol, interval ...
        assert API_KEY not in page.content()  # ... never a secret
    finally:
        page.close()


def _filtered_urls(stack) -> dict[str, tuple[str, dict[str, str]]]:
    """Per page: a URL with non-default filters, and what its widgets must then show."""
    provider, model, region, prompt, _ = TARGETS[2]  # openai gpt-4o-mini eu-west-1 long
    seeded = f"{provider}/{model}@{region}:{prompt}"
    q = f"provider={provider}&model={model}&region={region}&prompt={prompt}"
    return {
        "overview": ("", {}),
        "trends": (f"{q}&range=6+h&split=target&log=1",
                   {"Providers": provider, "Models": model, "Prompts": prompt, "Range": "6 h",
                    "One line per": "target", "Log TTFT axis": "on"}),
        "compare": ("prompt=long&range=7+d", {"Prompt": "long", "Range": "7 d"}),
        "timeline": ("provider=anthropic&range=6+h&only=0",
                     {"Providers": "anthropic", "Range": "6 h", "Only lanes with incidents": "off"}),
        "target": (f"target={seeded}&range=6+h", {"Target": seeded, "Range": "6 h"}),
        "health": ("provider=openai", {"Provider": "openai"}),
        "alerts": ("days=7", {"History": "7 d"}),
        "samples": (f"target={seeded}&range=6+h&outcome=failed&metric=tps",
                    {"Target": seeded, "Range": "6 h", "Outcome": "failed", "Metric": "tps"}),
    }  # fmt: skip


def test_every_page_applies_the_filters_in_its_url_and_no_legend_covers_a_title(stack, browser):
    urls = _filtered_urls(stack)
    assert set(urls) == set(PAGES)
    for width in WIDTHS:
        page = browser.new_page(viewport={"width": width, "height": 2200})  # most pages whole on one screenshot
        try:
            for name in PAGES:
                query, expected = urls[name]
                _open(page, f"{stack['base']}/{name}" + (f"?{query}" if query else ""))
                page.screenshot(path=str(SCREENSHOTS / f"{name}-{width}.png"), full_page=True)
                assert page.locator("h1").first.inner_text().strip(), name
                for label, shown in expected.items():
                    assert _widget_text(page, label) == shown, (name, label, _widget_text(page, label))
                # What the page read stays in its URL (a value equal to the page's default may drop out).
                kept, given = parse_qs(urlsplit(page.url).query), parse_qs(query)
                assert all(given.get(k) == v for k, v in kept.items()), (name, page.url)
                assert {k for k in given if k in ("range", "days", "outcome", "metric", "only", "log")} <= set(kept)
                covered = page.evaluate(OVERLAPS)
                assert not covered, f"{name} at {width} px: a legend covers {covered}"
        finally:
            page.close()
    assert sum(len(list(SCREENSHOTS.glob(f"*-{w}.png"))) for w in WIDTHS) == len(PAGES) * len(WIDTHS)


def test_a_changed_filter_goes_into_the_url_and_back_returns_to_the_one_before(stack, browser):
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    try:
        _open(page, f"{stack['base']}/alerts?days=7")
        page.locator('[data-testid="stButtonGroup"] button', has_text="90 d").first.click()
        page.wait_for_url("**/alerts?days=90", timeout=30_000)
        page.wait_for_function(RENDERED, timeout=60_000)
        assert _widget_text(page, "History") == "90 d"
        page.reload()
        page.wait_for_function(RENDERED, timeout=60_000)
        page.wait_for_timeout(1000)
        assert _widget_text(page, "History") == "90 d"
        page.go_back()
        page.wait_for_url("**/alerts?days=7", timeout=30_000)
        page.wait_for_timeout(2000)
        page.wait_for_function(RENDERED, timeout=60_000)
        assert _widget_text(page, "History") == "7 d"
    finally:
        page.close()
