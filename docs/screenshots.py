"""Regenerate the dashboard screenshots in docs/screenshots/ (`make screenshots`), one per page.

The demo's own history (`firsttoken demo --backfill-only`, a seeded day of simulated providers with
their incidents) is written to a scratch database, `firsttoken dashboard`'s Streamlit serves it on a
free loopback port, and Playwright drives Debian's Chromium (/usr/bin/chromium, `make browser-deps`;
nothing is downloaded) over every page. The PNGs are reduced to a 256-colour palette so the
repository stays small. Run from the repository root with the project's virtualenv:

    .venv/bin/python docs/screenshots.py [--out docs/screenshots] [--width 1280]
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image

from dashboard.launch import start_dashboard, stop_process, wait_until_up

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
# The dashboard's pages by URL path (dashboard/app.py) and the caption each screenshot is for.
PAGES = ("overview", "trends", "compare", "timeline", "target", "health", "alerts", "slos", "samples", "reports")
SEED = 7  # fixed jitter and incidents: regenerated images differ little beyond where the UI changed
# Rendered: no skeleton left, something drawn (chart, table or message), the script finished.
RENDERED = """() => document.querySelectorAll('[data-testid="stSkeleton"]').length === 0
  && document.querySelectorAll('.js-plotly-plot .main-svg, [data-testid="stDataFrame"], [data-testid="stAlert"], iframe[srcdoc]').length > 0
  && !document.querySelector('[data-testid="stStatusWidget"]')"""


def query(name: str) -> str:
    """The view a page's screenshot shows where its default would be empty: the demo's history is a day,
    so the Reports page shows this week so far (its default is the last whole week)."""
    if name != "reports":
        return ""
    from datetime import UTC, datetime
    from zoneinfo import ZoneInfo

    from monitor.reports.schedule import week_at

    return f"?week={week_at(datetime.now(UTC), ZoneInfo('UTC')).label}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def demo_history(workdir: Path) -> tuple[Path, str]:
    """The demo's config and a database holding its day of history."""
    database = workdir / "demo.db"
    command = [sys.executable, "-m", "monitor", "demo", "--backfill-only", "--backfill", "24h"]
    command += ["--db", str(database), "--workdir", str(workdir / "demo"), "--seed", str(SEED), "--no-browser"]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return workdir / "demo" / "firsttoken.yaml", f"sqlite:///{database}"


def shrink(path: Path) -> None:
    """A 256-colour palette: charts and tables lose nothing visible, the file most of its bytes."""
    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)


def capture(base_url: str, out: Path, width: int) -> list[Path]:
    from playwright.sync_api import sync_playwright

    saved = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": 1000})
            for name in PAGES:
                page.goto(f"{base_url}/{name}{query(name)}")
                page.wait_for_function(RENDERED, timeout=120_000)
                page.wait_for_timeout(2000)  # Plotly finishes drawing after the script does
                errors = page.query_selector_all('[data-testid="stException"]')
                if errors:
                    raise RuntimeError(f"{name}: the page raised: {errors[0].inner_text()[:300]}")
                path = out / f"{name}.png"
                page.screenshot(path=str(path))
                shrink(path)
                saved.append(path)
        finally:
            browser.close()
    return saved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate the dashboard screenshots from the demo's history.")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "screenshots")
    parser.add_argument("--width", type=int, default=1280, help="viewport width in px (default 1280)")
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"screenshots: {CHROMIUM} is missing: `make browser-deps` installs it", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="firsttoken-screenshots-") as scratch:
        config, database_url = demo_history(Path(scratch))
        port = free_port()
        log = (Path(scratch) / "streamlit.log").open("w")
        process = start_dashboard(str(config), database_url, port, stdout=log, stderr=log)
        try:
            if not wait_until_up(port, 90):
                raise RuntimeError("the dashboard did not answer on its port within 90 s")
            for path in capture(f"http://127.0.0.1:{port}", args.out, args.width):
                print(f"{path} ({path.stat().st_size // 1024} KB)")
        finally:
            stop_process(process)
            log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
