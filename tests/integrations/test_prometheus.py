"""deploy/prometheus against Debian's promtool and a real Prometheus scraping a real `firsttoken run`."""

from __future__ import annotations

import sqlite3
import subprocess
from datetime import UTC, datetime

import pytest

from monitor.agent.metrics_window import WINDOW_S, quantile
from tests.integrations.conftest import BROKEN, FAST, ROOT, SLOW, need, wait_for

pytestmark = pytest.mark.integration
RULES = sorted((ROOT / "deploy/prometheus/rules").glob("*.yml"))


def test_promtool_accepts_the_rules_and_the_config():
    promtool = need("promtool")
    result = subprocess.run([promtool, "check", "rules", *map(str, RULES)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("SUCCESS") == len(RULES)
    config = ROOT / "deploy/prometheus/prometheus.yml"
    result = subprocess.run([promtool, "check", "config", "--syntax-only", str(config)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_promtool_finds_nothing_to_lint_in_a_real_scrape(running):
    scrape = running.scrape()
    assert "firsttoken_ttft_seconds_bucket" in scrape and "firsttoken_probes_total" in scrape
    result = subprocess.run([need("promtool"), "check", "metrics"], input=scrape, capture_output=True, text=True)
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


def stored(db, model: str, since_s: float = 0, until_s: float = 1e12) -> tuple[list[float], int, int]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT ttft_ms, started_at FROM samples WHERE model=? AND ok=1", (model,)).fetchall()
        ttfts = [
            ttft / 1000
            for ttft, started in rows
            if since_s <= datetime.fromisoformat(started).replace(tzinfo=UTC).timestamp() <= until_s
        ]
        total, ok = conn.execute(
            "SELECT count(*), coalesce(sum(ok), 0) FROM samples WHERE model=?", (model,)
        ).fetchone()
    return ttfts, total, ok


def series(prometheus, expr: str) -> dict[str, float]:
    return {r["metric"].get("model", ""): float(r["value"][1]) for r in prometheus.query(expr)["result"]}


def test_recording_rules_agree_with_the_stored_samples(prometheus, running):
    p50 = "provider_model_region:firsttoken_ttft_seconds:p50_5m"
    avail = "provider_model_region:firsttoken_probes:availability_5m"
    assert wait_for(lambda: {FAST, SLOW} <= set(series(prometheus, p50)) and BROKEN in series(prometheus, avail), 60), (
        series(prometheus, p50),
        series(prometheus, avail),
        prometheus.query("up")["result"],
    )

    # The agent computes each target's percentiles over its OK samples of the last 5 minutes
    # (firsttoken_target_ttft_seconds); the rule takes them from the scrape before its evaluation.
    # Probes finishing near either edge of that window may fall on either side: the rule must lie
    # between the quantiles of the samples surely inside and of those possibly inside.
    (up,) = prometheus.query("up[10m]")["result"]
    first_scrape_s = float(up["values"][0][0])
    wait_for(lambda: series(prometheus, f"timestamp({p50})").get(FAST, 0) > first_scrape_s + 10, 30)
    for model in (FAST, SLOW):
        for q, rule in ((0.5, p50), (0.99, "provider_model_region:firsttoken_ttft_seconds:p99_5m")):
            evaluated_s = series(prometheus, f'timestamp({rule}{{model="{model}"}})')[model]
            got = series(prometheus, f'{rule}{{model="{model}"}}')[model]
            inside, _, _ = stored(running.db, model, evaluated_s - WINDOW_S + 2, evaluated_s - 3)
            maybe, _, _ = stored(running.db, model, evaluated_s - WINDOW_S - 2, evaluated_s)
            assert len(inside) >= 5, (model, first_scrape_s, evaluated_s)
            low, high = sorted((quantile(sorted(inside), q), quantile(sorted(maybe), q)))
            assert low - 0.005 <= got <= high + 0.005, (model, q, got, inside, maybe)
    got = series(prometheus, p50)
    assert 0.1 < got[FAST] <= 0.15 and 0.3 < got[SLOW] <= 0.4  # the simulator's 120 ms and 320 ms
    # The per provider region histograms (what heatmaps and SLO burn read) hold the same samples.
    region_p90 = prometheus.query("provider_region:firsttoken_ttft_seconds:p90_5m")["result"]
    assert region_p90 and all(0.1 < float(r["value"][1]) <= 0.4 for r in region_p90), region_p90

    availability = series(prometheus, avail)
    for model in (FAST, SLOW, BROKEN):
        _, total, ok = stored(running.db, model)
        assert availability[model] == pytest.approx(ok / total), model
    assert availability[BROKEN] == 0 and availability[FAST] == 1

    tps = series(prometheus, "provider_model_region:firsttoken_decode_tokens_per_second:p50_5m")
    assert tps[FAST] > tps[SLOW] > 0  # itl 3 ms decodes faster than itl 6 ms

    # The alert rules evaluate on the same data: the failing model's alert is pending (for: 5m).
    alerts = prometheus.query('ALERTS{alertname="FirsttokenProviderUnavailable"}')["result"]
    assert {(a["metric"]["model"], a["metric"]["alertstate"]) for a in alerts} == {(BROKEN, "pending")}
