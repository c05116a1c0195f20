"""Concurrency caps that follow the schedule, on a real `firsttoken run` against the simulator.

The issue's measurement scaled down: probes taking 0.6-2.6 s (TTFT and a
short answer, as flagships do), enough targets on one provider-region that
the old fixed defaults (64 in flight, 8 per provider-region) fall behind:
24 targets every 3 s start 8 probes a second, × 1.6 s ≈ 13 in flight. With the caps on `auto`
(the default) the schedule holds; the time a probe waits for a cap is
recorded apart from scheduler lag, in the sample, /metrics and /healthz.
"""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import httpx
import numpy as np

from monitor.commands.check_config import check_config_command
from tests.agent.test_service import Running, migrate, wait_for

TTFTS_MS = (600, 1000, 1400, 1800, 2200, 2600)
PROMPTS = ("a", "b", "c", "d")
RATE_PER_S = len(TTFTS_MS) * len(PROMPTS) / 3.0
WARM_UP_S = 3.0  # the first seconds size the caps from a guess; judged after


def write_config(path: Path, simulator, db: Path, caps: dict | None = None) -> None:
    path.write_text(
        json.dumps(
            {
                "database": f"sqlite:///{db}",
                "agent": "caps-test",
                "defaults": {"interval": "3s", "timeout": "10s", "ttft_timeout": "5s", **(caps or {})},
                "providers": {
                    "sim": {
                        "protocol": "openai-chat",
                        "api_key": "sk-caps-test",
                        "regions": {"local": simulator.base_url + "/v1"},
                        "models": [f"sim:ttft={ms}:itl=5:tokens=3:jitter=0" for ms in TTFTS_MS],
                    }
                },
                "prompts": {p: {"messages": [{"role": "user", "content": p}], "max_tokens": 8} for p in PROMPTS},
                "checks": [{"providers": ["sim"], "prompts": list(PROMPTS)}],
            }
        )
    )


def test_auto_caps_hold_a_schedule_the_old_defaults_could_not(tmp_path, simulator):
    db = tmp_path / "caps.db"
    config = tmp_path / "firsttoken.yaml"
    write_config(config, simulator, db)
    migrate(config)
    service = Running(config, tmp_path)
    try:
        wait_for(lambda: False, timeout_s=WARM_UP_S + 6.0)
        health = httpx.get(f"http://127.0.0.1:{service.port}/healthz", timeout=2).json()
        metrics = service.metrics()
    finally:
        assert service.stop() == 0
        output = service.output()
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT (julianday(started_at) - julianday(MIN(started_at) OVER ())) * 86400, sched_lag_ms, "
            "queue_wait_ms FROM samples WHERE error_kind IS NULL OR error_kind != 'cancelled'"
        ).fetchall()
    assert rows, output
    assert all(wait is not None for _, _, wait in rows), "queue_wait_ms is recorded on every sample"
    settled = np.array([(lag, wait) for at, lag, wait in rows if at > WARM_UP_S])
    late_ms = settled.sum(axis=1)  # how late each probe actually started: the scheduler's lag plus the wait
    # 8 probes a second for ~6 s: the schedule held, every target probed every 3 s.
    assert len(settled) >= RATE_PER_S * 5, len(settled)
    assert np.percentile(late_ms, 99) < 300, np.percentile(late_ms, [50, 90, 99])
    route = health["caps"]["sim@local"]
    assert route["auto"] and route["cap"] > 8 and 10 <= route["needed"] <= 20, route
    assert health["short_of_cap"] == []
    assert "firsttoken_queue_wait_seconds_bucket" in metrics
    assert 'firsttoken_concurrency_cap{provider="sim",region="local"}' in metrics


def test_check_config_names_a_provider_region_its_fixed_cap_cannot_keep_on_schedule(tmp_path, simulator):
    config = tmp_path / "firsttoken.yaml"
    write_config(config, simulator, tmp_path / "x.db", caps={"max_per_provider_region": 8})
    out = io.StringIO()
    assert check_config_command(str(config), out) == 0
    notes = [line for line in out.getvalue().splitlines() if "sim@local" in line]
    assert notes == [
        "note: sim@local starts 8.00 probes/s; under its cap of 8 in flight (max_per_provider_region) "
        "it keeps its schedule only while probes average under 1.0 s"
    ], out.getvalue()
    # `auto` is accepted, and with it the same schedule has room.
    write_config(config, simulator, tmp_path / "x.db", caps={"max_per_provider_region": "auto"})
    out = io.StringIO()
    assert check_config_command(str(config), out) == 0
    assert not [line for line in out.getvalue().splitlines() if line.startswith("note: sim@local")], out.getvalue()


def test_a_route_split_over_probe_workers_merges_into_one_figure():
    from monitor.agent.caps import RouteSnapshot, short_routes

    def part(rate, duration, cap, wait_ms, observed=10):
        return RouteSnapshot(
            targets=round(rate * 60), rate_per_s=rate, duration_s=duration, observed=observed, cap=cap,
            auto=True, in_flight=2, waiting=1, queue_wait_ms=wait_ms,
        )  # fmt: skip

    merged = RouteSnapshot.merge([part(1.0, 2.0, 6, 0.0), part(3.0, 1.0, 10, 40.0)])
    assert (merged.targets, merged.cap, merged.in_flight, merged.waiting) == (240, 16, 4, 2)
    assert merged.rate_per_s == 4.0
    assert merged.duration_s == (1.0 * 2.0 + 3.0 * 1.0) / 4.0  # weighted by each part's probes a second
    assert merged.queue_wait_ms == 30.0
    assert merged.needed == 5.0 and not merged.short()
    # Short of cap as a whole: the words name the route once, with the merged figures.
    tight = RouteSnapshot.merge([part(2.0, 2.0, 2, 900.0), part(2.0, 2.0, 2, 700.0)])
    (line,) = short_routes({("p", "eu"): tight})
    assert line.startswith("p@eu: 240 targets start 4.00 probes/s") and "its cap is 4" in line
