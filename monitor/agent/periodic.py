"""The service's periodic work as APScheduler jobs: housekeeping on every agent, leader work on the leader.

Every job runs once at start, then every `interval_s` (APScheduler interval
triggers, coalesced: a job late by many intervals runs once). Jobs that touch
the database run one at a time, in the order they were added when due
together: SQLite has one writer, and alert evaluation runs before outbox
delivery so a new page goes out in the same round. Leader jobs do nothing on
an agent that is not the leader; when it becomes one, those whose interval
has passed since they last ran (or that never ran) run at once, as a
standby's first round after a take-over should.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.interval import IntervalTrigger

log = logging.getLogger(__name__)

# Jobs due at the same moment are started this far apart, in the order added:
# APScheduler would otherwise break the tie by job id.
ORDER_STEP = timedelta(milliseconds=1)

# A run still going (or waiting its turn) when the next is due is skipped: the coalescing the old
# loop did silently. APScheduler warns about each skip; with no misfire limit that is all it warns about.
_QUIET = logging.getLogger(f"{__name__}.apscheduler")
_QUIET.setLevel(logging.ERROR)


@dataclass(frozen=True, slots=True)
class Periodic:
    name: str
    interval_s: float
    run: Callable[[], Awaitable[object]]
    leader_only: bool
    serial: bool


class PeriodicJobs:
    def __init__(self, is_leader: Callable[[], bool]) -> None:
        self._is_leader = is_leader
        self._jobs: list[Periodic] = []
        self._last_run_s: dict[str, float] = {}  # monotonic, for the leader hand-over
        self._running: set[asyncio.Task] = set()
        self._serial = asyncio.Lock()
        self._scheduler = AsyncIOScheduler(
            timezone=UTC,
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
            logger=_QUIET,
        )

    def every(
        self, name: str, interval_s: float, run: Callable[[], Awaitable[object]], *, leader_only=False, serial=True
    ) -> None:
        """Add a job (before `start`): `run` is awaited; `serial` ones never overlap one another."""
        self._jobs.append(Periodic(name, interval_s, run, leader_only, serial))

    @property
    def names(self) -> list[str]:
        return [job.name for job in self._jobs]

    def start(self) -> None:
        now = datetime.now(UTC)
        self._scheduler.start()
        for k, job in enumerate(self._jobs):
            first = now + k * ORDER_STEP
            self._scheduler.add_job(
                self._fire,
                IntervalTrigger(seconds=job.interval_s, start_date=first, timezone=UTC),
                args=(job,),
                id=job.name,
                name=job.name,
                next_run_time=first,
            )

    def became_leader(self) -> None:
        """Run now the leader jobs whose interval has passed since they last ran here."""
        now, now_s = datetime.now(UTC), time.monotonic()
        for k, job in enumerate(self._jobs):
            last = self._last_run_s.get(job.name)
            if job.leader_only and (last is None or now_s - last >= job.interval_s):
                self._scheduler.modify_job(job.name, next_run_time=now + k * ORDER_STEP)

    async def shutdown(self) -> None:
        """Stop firing; cancel the jobs running now and wait for them to unwind."""
        if self._scheduler.running:
            self._scheduler.pause()
        for task in list(self._running):
            task.cancel()
        await asyncio.gather(*self._running, return_exceptions=True)
        if self._scheduler.running:
            self._scheduler.shutdown(wait=False)

    async def _fire(self, job: Periodic) -> None:
        if job.leader_only and not self._is_leader():
            return
        task = asyncio.current_task()
        self._running.add(task)
        try:
            if job.serial:
                async with self._serial:
                    await self._run(job)
            else:
                await self._run(job)
        except asyncio.CancelledError:
            # Only shutdown cancels; not re-raised, as APScheduler logs a raised cancellation as a crash.
            pass
        finally:
            self._running.discard(task)

    async def _run(self, job: Periodic) -> None:
        if job.leader_only and not self._is_leader():  # lost it while waiting for the lock
            return
        self._last_run_s[job.name] = time.monotonic()
        await job.run()
