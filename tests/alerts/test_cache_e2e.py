"""Prompt caching end to end (DESIGN §13): the real `firsttoken run` probes two cache targets
on the simulator as cold/warm pairs; both caches hit and nothing pages; then one provider's
cache stops hitting and exactly one alert fires, `cache_hit_ratio` on that target alone."""

from __future__ import annotations

import sqlite3
import time
import uuid

import pytest
import yaml

from monitor.storage import migrate
from monitor.storage.db import make_engine
from tests.alerts.receiver import Receiver
from tests.alerts.service_proc import ServiceProcess

pytestmark = pytest.mark.slow


def warm_counts(db) -> dict[str, tuple[int, int]]:
    """model -> (warm probes judged, of which hits)."""
    try:
        with sqlite3.connect(db) as conn:
            rows = conn.execute(
                "SELECT model, count(cache_hit), sum(cache_hit) FROM samples WHERE cache_state = 'warm' GROUP BY model"
            ).fetchall()
    except sqlite3.OperationalError:
        return {}
    return {m: (n, int(h or 0)) for m, n, h in rows}


def wait_until(predicate, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def test_a_cache_that_stops_hitting_pages_once(simulator, tmp_path) -> None:
    tag = uuid.uuid4().hex[:6]
    steady, breaks = f"cache-steady-{tag}", f"cache-breaks-{tag}"
    for model in (steady, breaks):  # 250 ms of prefill per 1,000 uncached tokens
        simulator.set_model(model, ttft_ms=20, itl_ms=1, output_tokens=4, prefill_ms_per_1k_tokens=250, jitter=0)
    db = tmp_path / "firsttoken.db"
    url = f"sqlite:///{db}"
    migrate.upgrade(make_engine(url))
    with Receiver() as hooks:
        spec = {
            "database": url,
            "agent": "cache",
            "defaults": {"interval": "1s", "timeout": "10s", "ttft_timeout": "5s"},
            "prompts": {"doc": {"synthetic": {"tokens": 1200}, "max_tokens": 8, "cache": True}},
            "providers": {
                "sim": {
                    "protocol": "openai-chat",
                    "api_key": "sk-cache-test",
                    "regions": {"local": simulator.base_url + "/v1"},
                    "models": [steady, breaks],
                }
            },
            "checks": [{"providers": ["sim"], "prompts": ["doc"]}],
            "alerts": [
                {
                    "name": "cache-hit",
                    "metric": "cache_hit_ratio",
                    "kind": "threshold",
                    "below": "50%",
                    "window": "20s",
                    "min_samples": 4,
                    "severity": "ticket",
                },
                {"name": "ttft-regression", "metric": "ttft_ms", "kind": "regression", "severity": "page"},
                {"name": "errors", "metric": "error_rate", "kind": "threshold", "above": "20%", "severity": "page"},
            ],
            "notifiers": [{"name": "hooks", "type": "webhook", "url": hooks.url + "/alerts"}],
        }
        config = tmp_path / "firsttoken.yaml"
        config.write_text(yaml.safe_dump(spec))
        with ServiceProcess(config, tmp_path) as service:
            steady_hits = lambda: all(warm_counts(db).get(m, (0, 0))[1] >= 6 for m in (steady, breaks))  # noqa: E731
            assert wait_until(steady_hits, 60), (warm_counts(db), service.log())
            time.sleep(3)
            assert not hooks.accepted, "caches that hit page nothing"
            simulator.set_model(breaks, prompt_cache=False)
            page = hooks.wait_for(lambda r: any(b.json()["status"] == "firing" for b in r.accepted), 40)
            time.sleep(4)  # past a second alert, if one were coming
            log = service.log()
        counts = warm_counts(db)
        bodies = [b.json() for b in hooks.accepted]
    assert page, log
    firing = [b for b in bodies if b["status"] == "firing"]
    assert len(firing) == 1, firing
    (body,) = firing
    assert (body["rule"], body["metric"], body["scope"]["model"]) == ("cache-hit", "cache_hit_ratio", breaks)
    assert body["value"] < 0.5 and body["baseline"] == 0.5
    n, hits = counts[steady]
    assert hits == n, "the steady cache hit on every warm probe"
    assert counts[breaks][1] < counts[breaks][0]
