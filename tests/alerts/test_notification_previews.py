"""The notifications as a person sees them (DESIGN §18): the Slack message, the Teams card and the mail,
drawn by monitor.alerts.preview and opened in headless Chromium (the docs' screenshots come from the same)."""

from __future__ import annotations

import os
from datetime import UTC, datetime

import pytest

from monitor.alerts.charts import AlertCharts
from monitor.alerts.preview import previews
from monitor.alerts.sample import sample_body
from monitor.alerts.signing import AlertLinks

from .conftest import make_config
from .helpers import config_spec

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
NOW = datetime(2026, 11, 24, 9, 42, tzinfo=UTC)


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} missing: `make browser-deps` installs it", pytrace=False)
        pytest.skip(f"{CHROMIUM} not installed (make browser-deps)")
    from playwright.sync_api import sync_playwright

    spec = config_spec(models=("gpt-4o-mini",), providers=("openai",), regions=("us-east",))
    spec["alerts"] = [{"name": "ttft-regression", "metric": "ttft_ms", "kind": "regression",
                       "runbook": "https://runbooks.example.com/ttft"}]  # fmt: skip
    spec["dashboard_url"] = "https://firsttoken.example.com"
    spec["public_url"] = "https://firsttoken.example.com:9464"
    config = make_config(spec, tmp_path_factory.mktemp("cfg"))
    body = sample_body(config, NOW, links=AlertLinks(config.public_url, b"k"))
    html = previews(body, AlertCharts(None, lambda: config, clock=lambda: NOW).for_body(body))
    directory = tmp_path_factory.mktemp("previews")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            opened = {}
            for name, text in html.items():
                (directory / f"{name}.html").write_text(text)
                page = browser.new_page(viewport={"width": 820, "height": 700})
                page.goto((directory / f"{name}.html").as_uri())
                page.wait_for_function("() => [...document.images].every(i => i.complete)")
                opened[name] = page
            yield body, opened
        finally:
            browser.close()


def shown(page) -> dict:
    return page.evaluate(
        """() => ({
            text: document.body.innerText,
            images: [...document.images].map(i => [i.naturalWidth, i.naturalHeight, i.getBoundingClientRect().width]),
            links: [...document.querySelectorAll('a')].map(a => [a.innerText.trim(), a.href]),
        })"""
    )


@pytest.mark.parametrize("name", ["slack-alert", "teams-alert", "email-alert"])
def test_each_shows_the_title_the_facts_the_chart_and_the_three_links(pages, name):
    body, opened = pages
    seen = shown(opened[name])
    text = seen["text"]
    assert "PAGE · ttft-regression firing on openai/gpt-4o-mini@us-east:short" in text
    for words in ("us-east and eu-west", "ap-south", "Mostly the provider", "412 ms → 968 ms (+135%)"):
        assert words in text, (name, words)
    ((width, height, drawn),) = seen["images"]
    assert width >= 400 and height >= 200 and drawn >= 400  # the chart loaded, and is shown wide
    labels = dict(seen["links"])
    assert labels["Open in dashboard"] == body["dashboard_url"]
    assert labels["Silence 1 h"] == body["silence_url"] and labels["Runbook"] == body["runbook"]
