"""deploy/prometheus against Debian's promtool and a real Prometheus scraping a real `firsttoken run`."""

from __future__ import annotations

import sqlite3
import subprocess
from bisect import bisect_left
from datetime import UTC, datetime

import pytest

from monitor.agent.metrics import TTFT_BUCKETS_S
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


def histogram_quantile(q: float, values: list[float], bounds=TTFT_BUCKETS_S) -> float:
    """Prometheus' histogram_quantile over our buckets, computed from raw values."""
    counts = [0] * (len(bounds) + 1)
    for v in values:
        counts[bisect_left(bounds, v)] += 1  # le: a value equal to a bound falls in that bucket
    rank = q * len(values)
    seen = 0
    for i, c in enumerate(counts):
        if seen + c >= rank and c:
            lower = 0.0 if i == 0 else bounds[i - 1]
            upper = bounds[i] if i < len(bounds) else bounds[-1]
            return lower + (upper - lower) * (rank - seen) / c
        seen += c
    raise AssertionError("no values")


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

    # A rate only sees what happened between scrapes: the samples after Prometheus's first scrape
    # and before the rule's evaluation (the first, cold-connection probe came before it). Probes
    # finishing near either edge may fall on either side: the rule must lie between the quantiles
    # of the samples surely inside and of those possibly inside.
    (up,) = prometheus.query("up[10m]")["result"]
    first_scrape_s = float(up["values"][0][0])
    wait_for(lambda: series(prometheus, f"timestamp({p50})").get(FAST, 0) > first_scrape_s + 10, 30)
    for model in (FAST, SLOW):
        for q, rule in ((0.5, p50), (0.99, "provider_model_region:firsttoken_ttft_seconds:p99_5m")):
            evaluated_s = series(prometheus, f'timestamp({rule}{{model="{model}"}})')[model]
            got = series(prometheus, f'{rule}{{model="{model}"}}')[model]
            inside, _, _ = stored(running.db, model, first_scrape_s + 1, evaluated_s - 2)
            maybe, _, _ = stored(running.db, model, first_scrape_s - 1, evaluated_s)
            assert len(inside) >= 5, (model, first_scrape_s, evaluated_s)
            low, high = sorted((histogram_quantile(q, inside), histogram_quantile(q, maybe)))
            assert low - 0.005 <= got <= high + 0.005, (model, q, got, inside, maybe)
    got = series(prometheus, p50)
    assert 0.1 < got[FAST] <= 0.15 and 0.3 < got[SLOW] <= 0.4  # the simulator's 120 ms and 320 ms buckets

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
