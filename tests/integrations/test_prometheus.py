"""deploy/prometheus against Debian's promtool and a real Prometheus scraping a real `firsttoken run`."""

from __future__ import annotations

import sqlite3
import subprocess
from bisect import bisect_left

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


def stored(db, model: str) -> tuple[list[float], int, int]:
    with sqlite3.connect(db) as conn:
        ttfts = [r[0] / 1000 for r in conn.execute("SELECT ttft_ms FROM samples WHERE model=? AND ok=1", (model,))]
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

    for model in (FAST, SLOW):
        ttfts, _, _ = stored(running.db, model)
        for q, rule in ((0.5, p50), (0.99, "provider_model_region:firsttoken_ttft_seconds:p99_5m")):
            got = series(prometheus, f'{rule}{{model="{model}"}}')[model]
            assert got == pytest.approx(histogram_quantile(q, ttfts), abs=0.005), (model, q)
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
