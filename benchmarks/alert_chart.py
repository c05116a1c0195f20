"""What an alert's chart costs (DESIGN §18): the PNG a Slack or Teams message fetches, goal ≤ 300 ms.

    python -m benchmarks.alert_chart [--runs 30] [--database URL]

Seeds six hours of a target probed every minute from three vantage points (the last 45 minutes
twice as slow from two of them) and a provider-region of 20 such targets, stores an alert on each,
starts the real status server (the one `firsttoken run --listen` serves) on loopback and times, in
the same run: the first chart in a fresh process (matplotlib's import included, what the first page
after a restart costs), the samples read (monitor.storage.queries.alertchart), the drawing alone
(monitor.alerts.chart, matplotlib's Agg), and GET /alerts/<id>/chart.png end to end with its signature
checked. Prints one table (median and p95, ms); quote ratios, not absolutes.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from monitor.alerts.chart import render_png
from monitor.alerts.charts import BUCKET_S, AlertCharts, plot_of, spec_of
from monitor.alerts.records import AlertRecord, Change
from monitor.alerts.scope import Scope
from monitor.alerts.signing import AlertLinks, link_secret
from monitor.alerts.store import apply_changes
from monitor.config import load_config_text
from monitor.http.alertlinks import AlertLinkPages
from monitor.http.app import build_app
from monitor.http.health import Health
from monitor.http.server import StatusServer
from monitor.sample import Sample
from monitor.storage import migrate
from monitor.storage.db import make_engine
from monitor.storage.queries import insert_samples
from monitor.storage.queries.alertchart import per_agent

GOAL_MS = 300.0
AGENTS = ("us-east", "eu-west", "ap-south")
MODELS = 20
CONFIG = """
public_url: http://127.0.0.1:{port}
providers:
  openai: {{protocol: openai-chat, api_key: x, regions: {{us: "http://127.0.0.1:1/v1"}}, models: [{models}]}}
prompts: {{short: {{messages: [{{role: user, content: hi}}]}}}}
checks: [{{providers: [openai], prompts: [short]}}]
alerts: [{{name: ttft-regression, metric: ttft_ms, kind: regression}}]
"""


def seed(engine, now: datetime) -> datetime:
    rng = random.Random(7)
    changed = now - timedelta(minutes=45)
    samples = []
    for m in range(MODELS):
        for minute in range(6 * 60):
            at = now - timedelta(minutes=6 * 60 - minute)
            for agent in AGENTS:
                slow = at >= changed and agent != "ap-south"
                ttft = (900.0 if slow else 420.0) * rng.lognormvariate(0, 0.08)
                samples.append(
                    Sample(target=f"openai/m{m}@us:short", provider="openai", model=f"m{m}", region="us",
                           prompt="short", started_at=at, ok=True, ttft_ms=ttft, tps=60.0, agent=agent)
                )  # fmt: skip
    insert_samples(engine, samples)
    return changed


def store_alerts(engine, config, changed: datetime, now: datetime) -> tuple[int, int]:
    made = []
    for scope in (Scope("openai", "us", "m0", "short"), Scope("openai", "us")):
        record = AlertRecord(rule="ttft-regression", scope=scope, state="firing", severity="page", metric="ttft_ms",
                             started_at=changed, fired_at=changed, value=900.0, baseline=420.0,
                             agents=AGENTS[:2], agents_clear=AGENTS[2:])  # fmt: skip
        with engine.begin() as conn:
            apply_changes(conn, [Change(record, ("firing",))], (), dashboard_url=None, now=now)
            made.append(conn.exec_driver_sql("SELECT max(id) FROM alerts").scalar())
    return made[0], made[1]


def timed(fn, runs: int) -> list[float]:
    fn()  # warm: imports, fonts, the database's caches
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(1000 * (time.perf_counter() - t0))
    return out


def cold_first_chart_ms() -> float:
    """A fresh interpreter: import, then one chart (what the first page after a restart waits for)."""
    code = (
        "import time; t=time.perf_counter();"
        "from datetime import UTC, datetime; from monitor.config import Config;"
        "from monitor.alerts.charts import AlertCharts; from monitor.alerts.sample import sample_body;"
        "now=datetime.now(UTC); c=Config();"
        "AlertCharts(None, lambda: c, clock=lambda: now).for_body(sample_body(c, now));"
        "print(1000*(time.perf_counter()-t))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def row(name: str, ms: list[float]) -> str:
    q = statistics.quantiles(ms, n=20) if len(ms) > 1 else [ms[0]] * 19
    verdict = "ok" if statistics.median(ms) <= GOAL_MS else "over"
    return f"| {name} | {statistics.median(ms):.1f} | {q[18]:.1f} | {verdict} |"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--database", help="a database URL (default: a fresh SQLite file)")
    args = parser.parse_args()
    now = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as tmp:
        engine = make_engine(args.database or f"sqlite:///{Path(tmp) / 'bench.db'}")
        migrate.upgrade(engine)
        changed = seed(engine, now)
        holder: dict = {}
        pages = AlertLinkPages(engine, lambda: holder["config"], engine, clock=lambda: now)
        server = StatusServer("127.0.0.1", 0, build_app(lambda: [], lambda: Health(True, {}), alert_links=pages))
        models = ", ".join(f"m{m}" for m in range(MODELS))
        holder["config"] = config = load_config_text(CONFIG.format(port=server.port, models=models))
        target_id, group_id = store_alerts(engine, config, changed, now)
        links = AlertLinks(str(config.public_url), link_secret(engine))
        charts = AlertCharts(engine, lambda: config, clock=lambda: now)
        server.start()
        cold = cold_first_chart_ms()
        rows = []
        with httpx.Client() as client:
            for label, alert_id in (("a target", target_id), ("a provider-region (20 targets)", group_id)):
                body = charts.body_of(alert_id)
                plot = plot_of(body, config, now)
                series = per_agent(engine, plot.target_ids, plot.metric, plot.start, plot.end, bucket_s=BUCKET_S)
                spec = spec_of(body, plot, series)
                url = links.chart_url(alert_id, now)
                assert client.get(url).status_code == 200
                rows += [
                    row(f"{label}: samples read", timed(lambda p=plot: per_agent(
                        engine, p.target_ids, p.metric, p.start, p.end, bucket_s=BUCKET_S), args.runs)),
                    row(f"{label}: PNG drawn", timed(lambda s=spec: render_png(s), args.runs)),
                    row(f"{label}: GET chart.png", timed(lambda u=url: client.get(u).raise_for_status(), args.runs)),
                ]  # fmt: skip
        server.stop()
        engine.dispose()
    print(f"alert chart, {len(AGENTS)} vantage points x 6 h at 1/min, {args.runs} runs (goal: ≤ {GOAL_MS:.0f} ms)")
    print("| what | median ms | p95 ms | goal |")
    print("| --- | --- | --- | --- |")
    print(f"| first chart in a fresh process (imports included) | {cold:.0f} | - | - |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
