"""Scheduling: phases spread over the interval, caps hold, changes apply, shutdown records."""

from __future__ import annotations

import asyncio
import logging
import statistics
import time
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from monitor.agent.caps import MIN_AUTO_CAP, PER_ROUTE_CEILING, Gate, auto_cap
from monitor.agent.scheduler import ProbeScheduler, last_grid_time_s, next_grid_time_s, phase_offset_s
from monitor.sample import Sample


@dataclass(frozen=True)
class FakeTarget:
    """Just the attributes the scheduler reads; probing is replaced by a sleep."""

    id: str
    interval_s: float
    provider: str = "p"
    region: str = "r"
    model: str = "m"
    prompt: str = "q"


def test_phases_are_stable_and_spread_evenly():
    ids = [f"prov/model-{i}@region:short" for i in range(2000)]
    offsets = [phase_offset_s(i, 60) for i in ids]
    assert offsets == [phase_offset_s(i, 60) for i in ids]  # stable across calls
    assert all(0 <= o < 60 for o in offsets)
    per_second = [0] * 60
    for o in offsets:
        per_second[int(o)] += 1
    # 2,000 starts over 60 s: ~33 a second, never a burst on the minute
    assert max(per_second) < 2000 / 60 * 1.6
    assert min(per_second) > 2000 / 60 * 0.4


def test_grid_times():
    assert next_grid_time_s(100.0, 60, 10) == 130
    assert next_grid_time_s(130.0, 60, 10) == 130
    assert last_grid_time_s(129.9, 60, 10) == 70
    assert last_grid_time_s(130.0, 60, 10) == 130


def run_scheduler(
    targets, *, seconds: float, probe_s: float = 0.05, max_concurrency=64, per_route=8, apply=None, grace_s=1.0
):
    samples: list[Sample] = []
    in_flight = {"now": 0, "max": 0, "route_max": 0}
    per_route_now: dict = {}

    async def probe(target, lag_ms):
        in_flight["now"] += 1
        key = (target.provider, target.region)
        per_route_now[key] = per_route_now.get(key, 0) + 1
        in_flight["max"] = max(in_flight["max"], in_flight["now"])
        in_flight["route_max"] = max(in_flight["route_max"], per_route_now[key])
        try:
            await asyncio.sleep(probe_s)
        finally:
            in_flight["now"] -= 1
            per_route_now[key] -= 1
        return Sample(
            target=target.id, provider=target.provider, model=target.model, region=target.region,
            prompt=target.prompt, started_at=__import__("datetime").datetime.now(__import__("datetime").UTC),
            ok=True, sched_lag_ms=lag_ms,
        )  # fmt: skip

    async def main():
        scheduler = ProbeScheduler(
            probe, samples.append, agent="a", max_concurrency=max_concurrency, max_per_provider_region=per_route
        )
        scheduler.start(targets)
        if apply is not None:
            await asyncio.sleep(seconds / 2)
            scheduler.apply(apply)
            await asyncio.sleep(seconds / 2)
        else:
            await asyncio.sleep(seconds)
        await scheduler.shutdown(grace_s=grace_s)

    asyncio.run(main())
    return samples, in_flight


def test_every_target_runs_each_interval_on_time():
    targets = [FakeTarget(f"t{i}", 1.0) for i in range(40)]
    samples, _ = run_scheduler(targets, seconds=3.2, per_route=100)
    finished = [s for s in samples if s.ok]
    counts = {t.id: 0 for t in targets}
    for s in finished:
        counts[s.target] += 1
    assert all(3 <= c <= 4 for c in counts.values()), counts
    lags = [s.sched_lag_ms for s in finished]
    assert statistics.median(lags) < 50


def test_concurrency_caps_hold():
    targets = [FakeTarget(f"t{i}", 1.0, provider="same") for i in range(30)]
    _, seen = run_scheduler(targets, seconds=2.2, probe_s=0.9, max_concurrency=64, per_route=4)
    assert seen["route_max"] <= 4
    targets = [FakeTarget(f"t{i}", 1.0, provider=f"p{i}") for i in range(30)]
    _, seen = run_scheduler(targets, seconds=2.2, probe_s=0.9, max_concurrency=5, per_route=8)
    assert seen["max"] <= 5


def test_waiting_for_a_slot_is_queue_wait_apart_from_lag_and_a_short_route_is_named():
    # 6 targets a second taking 0.6 s need ~3.6 in flight (Little's law); a fixed cap of 2 cannot keep up.
    targets = [FakeTarget(f"t{i}", 1.0, provider="same") for i in range(6)]
    short: list[str] = []

    async def main() -> list[Sample]:
        samples: list[Sample] = []

        async def probe(target, lag_ms):
            await asyncio.sleep(0.6)
            return Sample(target=target.id, provider=target.provider, model=target.model, region=target.region,
                          prompt=target.prompt, started_at=datetime.now(UTC), ok=True, sched_lag_ms=lag_ms)  # fmt: skip

        scheduler = ProbeScheduler(probe, samples.append, agent="a", max_concurrency=None, max_per_provider_region=2)
        scheduler.start(targets)
        await asyncio.sleep(2.5)
        short.extend(scheduler.short_routes())
        await scheduler.shutdown(grace_s=1.0)
        return samples

    samples = [s for s in asyncio.run(main()) if s.ok]
    assert max(s.queue_wait_ms for s in samples) > 500
    assert statistics.median(s.sched_lag_ms for s in samples) < 100  # the scheduler itself was on time
    assert len(short) == 1 and short[0].startswith("same@r: 6 targets start 6.00 probes/s"), short
    assert "its cap is 2 (max_per_provider_region)" in short[0]


def test_gate_limit_changes_wake_waiters_and_cancelled_waiters_leave_no_slot_behind():
    async def main() -> None:
        gate = Gate(1)
        await gate.acquire()
        waiters = [asyncio.ensure_future(gate.acquire()) for _ in range(3)]
        await asyncio.sleep(0)
        assert gate.waiting == 3
        waiters[0].cancel()
        await asyncio.sleep(0)
        gate.set_limit(3)  # two more fit now
        await asyncio.sleep(0)
        assert [w.done() and not w.cancelled() for w in waiters] == [False, True, True]
        assert (gate.in_use, gate.waiting) == (3, 0)
        for _ in range(3):
            gate.release()
        assert gate.in_use == 0

    asyncio.run(main())


def test_auto_caps_follow_littles_law_within_the_ceiling():
    assert auto_cap(rate_per_s=200 / 60, duration_s=1.6) == 13  # 2 × 5.3 + 2
    assert auto_cap(rate_per_s=10 / 300, duration_s=2.0) == MIN_AUTO_CAP
    assert auto_cap(rate_per_s=100, duration_s=30) == PER_ROUTE_CEILING


def test_apply_adds_and_removes_targets():
    before = [FakeTarget("keep", 0.5), FakeTarget("drop", 0.5)]
    after = [FakeTarget("keep", 0.5), FakeTarget("new", 0.5)]
    samples, _ = run_scheduler(before, seconds=3.0, apply=after)
    times = {}
    for s in samples:
        times.setdefault(s.target, []).append(s.started_at)
    assert "new" in times and "keep" in times
    assert max(times["drop"]) < min(times["new"]) or len(times["drop"]) <= 3


def test_shutdown_records_cancelled_probes():
    targets = [FakeTarget(f"t{i}", 0.5) for i in range(3)]
    samples, _ = run_scheduler(targets, seconds=1.0, probe_s=30)
    cancelled = [s for s in samples if s.error_kind == "cancelled"]
    assert cancelled and all(not s.ok for s in cancelled)


def test_shutdown_lets_probes_in_flight_finish_and_logs_no_error(caplog):
    # Regression: APScheduler's shutdown cancelled every job task at once, so the
    # grace period waited for nothing, and each cancellation was logged as a crash.
    targets = [FakeTarget(f"t{i}", 0.5) for i in range(6)]
    with caplog.at_level(logging.WARNING):
        samples, _ = run_scheduler(targets, seconds=1.2, probe_s=0.4, grace_s=5)
    assert samples and all(s.ok for s in samples), [s.error_kind for s in samples]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


@pytest.mark.parametrize("interval", [60.0, 300.0])
def test_first_run_waits_for_its_phase(interval):
    now = time.time()
    start = next_grid_time_s(now, interval, phase_offset_s("x", interval))
    assert now <= start < now + interval


def test_a_round_longer_than_its_interval_skips_the_next_and_says_so_once(caplog):
    """A cache pair at a 5 s interval can outlast it: the next round is skipped (never two at once),
    and the agent says so once per target per report period, with the count, instead of APScheduler's
    warning at every skip."""
    targets = [FakeTarget("slow", 0.3), FakeTarget("quick", 0.3)]
    with caplog.at_level(logging.WARNING):
        samples, seen = run_scheduler(targets, seconds=2.0, probe_s=0.7, grace_s=2.0)
    assert seen["max"] <= 2  # never two rounds of one target at once
    rounds = {t.id: sum(s.target == t.id for s in samples) for t in targets}
    assert all(1 <= n <= 3 for n in rounds.values()), rounds  # 2 s of 0.7 s rounds, not 6 of 0.3 s
    reports = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert len(reports) == 2, reports  # one per target within the report period, however many skips
    assert all("round(s) skipped since the last report" in m and "0.3 s interval" in m for m in reports)
    assert not [r for r in caplog.records if r.name.startswith("apscheduler")], caplog.text
