"""Regenerate the notification screenshots in docs/screenshots/ (slack-alert.png, teams-alert.png, email-alert.png).

The sample alert of `firsttoken notify test` (monitor.alerts.sample), as the slack, teams and email
notifiers build it, is drawn as each client would show it (monitor.alerts.preview: the Block Kit
message, the Adaptive Card, the mail's HTML part) with its chart (synthetic samples, drawn by
matplotlib), and photographed in Debian's Chromium through Playwright (`make browser-deps`; nothing
is downloaded). Run from the repository root with the project's virtualenv:

    .venv/bin/python docs/notification_screenshots.py [--out docs/screenshots]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from screenshots import CHROMIUM, CHROMIUM_ARGS, shrink

from monitor.alerts.charts import AlertCharts
from monitor.alerts.preview import previews
from monitor.alerts.sample import sample_body
from monitor.alerts.signing import AlertLinks
from monitor.config import load_config_text

NOW = datetime(2026, 11, 24, 9, 42, tzinfo=UTC)  # a fixed moment: the images change only with the code
CONFIG = """
dashboard_url: https://firsttoken.example.com
public_url: https://firsttoken.example.com:9464
providers:
  openai: {protocol: openai-chat, api_key: sk-x, regions: {us-east: "https://api.openai.com/v1"}, models: [gpt-4o-mini]}
prompts:
  short: {messages: [{role: user, content: Explain TTFT in one sentence.}], max_tokens: 64}
checks: [{providers: [openai], prompts: [short]}]
alerts:
  - {name: ttft-regression, metric: ttft_ms, kind: regression, min_change: 50%, runbook: https://runbooks.example.com/ttft}
"""
ALTERNATIVE = {"target": "azure/gpt-4o-mini@eastus:short", "provider": "azure", "model": "gpt-4o-mini",
               "region": "eastus", "ttft_ms": {"p50": 455.0}, "availability": 0.9995}  # fmt: skip
WIDTH = {"slack-alert": 820, "teams-alert": 820, "email-alert": 680}


def pages() -> dict[str, str]:
    config = load_config_text(CONFIG)
    links = AlertLinks(str(config.public_url), b"docs-screenshots")
    body = sample_body(config, NOW, links=links, alternative=ALTERNATIVE)
    chart = AlertCharts(None, lambda: config, clock=lambda: NOW).for_body(body)
    return previews(body, chart)


def capture(out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    saved = []
    with tempfile.TemporaryDirectory(prefix="firsttoken-notifications-") as scratch, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for name, html in pages().items():
                page = browser.new_page(viewport={"width": WIDTH[name], "height": 600})
                source = Path(scratch) / f"{name}.html"
                source.write_text(html)
                page.goto(source.as_uri())
                page.wait_for_function("() => [...document.images].every(i => i.complete && i.naturalWidth > 0)")
                path = out / f"{name}.png"
                page.screenshot(path=str(path), full_page=True)
                shrink(path)
                saved.append(path)
                page.close()
        finally:
            browser.close()
    return saved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate the notification screenshots.")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "screenshots")
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"notification screenshots: {CHROMIUM} is missing: `make browser-deps` installs it", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    for path in capture(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
