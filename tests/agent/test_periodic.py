"""The service's periodic work runs as APScheduler jobs: once at start, then on its interval, leader work on the leader."""

from __future__ import annotations

import asyncio
import time

from monitor.agent.periodic import PeriodicJobs
from monitor.agent.service import Service, ServiceOptions
from monitor.config import load_config_text
from monitor.leader.jobs import leader_jobs


def run_for(jobs: PeriodicJobs, seconds: float, during=None) -> None:
    async def main() -> None:
        jobs.start()
        if during is not None:
            await during()
        else:
            await asyncio.sleep(seconds)
        await jobs.shutdown()

    asyncio.run(main())


def test_jobs_run_at_start_in_order_then_every_interval_one_db_job_at_a_time():
    events: list[tuple[str, str, float]] = []
    t0 = time.monotonic()

    def job(name: str, takes_s: float):
        async def run() -> None:
            events.append(("start", name, time.monotonic() - t0))
            await asyncio.sleep(takes_s)
            events.append(("end", name, time.monotonic() - t0))

        return run

    jobs = PeriodicJobs(lambda: True)
    jobs.every("evaluate", 0.5, job("evaluate", 0.1), leader_only=True)
    jobs.every("deliver", 0.25, job("deliver", 0.01), leader_only=True)
    jobs.every("gauges", 0.2, job("gauges", 0.0), serial=False)
    run_for(jobs, 1.15)

    starts = [(name, at) for kind, name, at in events if kind == "start"]
    # All three at once at start, in the order added; delivery waits for evaluation, gauges for nothing.
    assert [name for name, _ in starts[:3]] == ["evaluate", "gauges", "deliver"], starts
    assert all(at < 0.3 for _, at in starts[:3]), starts
    # Then on their intervals: evaluate at ~0, 0.5, 1.0; deliver at ~0.1 (after evaluate), 0.25, 0.5+, 0.75, 1.0+.
    assert len([n for n, _ in starts if n == "evaluate"]) == 3, starts
    assert 4 <= len([n for n, _ in starts if n == "deliver"]) <= 6, starts
    assert len([n for n, _ in starts if n == "gauges"]) >= 5, starts
    # Serial jobs never overlap: each serial start comes after the previous serial end.
    open_ = 0
    for kind, name, _ in events:
        if name == "gauges":
            continue
        open_ += 1 if kind == "start" else -1
        assert open_ <= 1, events


def test_leader_jobs_wait_for_leadership_and_run_at_once_when_it_comes():
    leader = {"now": False}
    ran: list[tuple[str, float]] = []
    t0 = time.monotonic()

    def job(name: str):
        async def run() -> None:
            ran.append((name, time.monotonic() - t0))

        return run

    jobs = PeriodicJobs(lambda: leader["now"])
    jobs.every("heartbeat", 0.3, job("heartbeat"))
    jobs.every("rollups", 60.0, job("rollups"), leader_only=True)

    async def during() -> None:
        await asyncio.sleep(0.5)
        assert [name for name, _ in ran] == ["heartbeat", "heartbeat"]  # every agent; not the leader's work
        leader["now"] = True
        jobs.became_leader()
        await asyncio.sleep(0.2)
        # A minute-long interval, yet it ran at once on taking over; and only once.
        assert [name for name, at in ran if name == "rollups"] == ["rollups"]
        assert next(at for name, at in ran if name == "rollups") < 0.65
        jobs.became_leader()  # a second take-over within the interval does not run it again
        await asyncio.sleep(0.1)
        assert [name for name, _ in ran].count("rollups") == 1

    run_for(jobs, 0, during)


def test_the_service_schedules_housekeeping_and_the_leaders_work_on_apscheduler(tmp_path):
    config = load_config_text(f"database: sqlite:///{tmp_path / 'ft.db'}\nagent: periodic\n")
    options = ServiceOptions(str(tmp_path / "firsttoken.yaml"), spool_dir=str(tmp_path / "spool"))
    service = Service(options, config)
    try:
        assert service.periodic.names == [
            "gauges",
            "heartbeat",
            "leader",
            "confirmations",  # every agent: the leader's confirmation asks (DESIGN §11)
            *leader_jobs(config),  # the leader's one list (tests/leader/test_jobs.py)
        ]
    finally:
        service.writer.close()
        service.engine.dispose()
