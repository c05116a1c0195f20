"""Probe scheduling on APScheduler 3.x (4.x is still a pre-release).

One job per target. Start times are spread evenly over each interval by a
stable phase per target (a hash of its id), so 2,000 targets at 1-minute
intervals become ~33 probes a second, never a burst on the minute. A small
random jitter on top keeps agents with the same config from moving in
lockstep. `sched_lag_ms` is the time from the planned start (grid time +
jitter) to the moment the probe is ready to start; the time it then waits
for a concurrency slot is `queue_wait_ms`, apart, so a late start says
whether the scheduler or a cap held it.

Concurrency caps: a per provider-region cap (taken first, so a probe
waiting for its route holds no global slot) and a global cap on probes in
flight, so the monitor never causes the 429s it is meant to detect. `None`
means auto: sized from the schedule and the probes' observed durations
(monitor.agent.caps).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from apscheduler.events import EVENT_JOB_MAX_INSTANCES, JobSubmissionEvent
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.interval import IntervalTrigger

from monitor.agent.caps import GLOBAL_CEILING, Gate, RouteLoad, RouteSnapshot, short_routes
from monitor.sample import ErrorKind, Sample

log = logging.getLogger(__name__)

MAX_JITTER_S = 0.25
# A target whose round outlasts its interval (a cache probe's pair is two probes back to back) has
# its next round skipped: it never runs twice at once. APScheduler warns about every skip, which at
# a 5-second interval is a line every 5 seconds per target; its logger only passes errors, and the
# skips are reported here, per target, at most this often, with how many there were.
SKIP_REPORT_EVERY_S = 600.0
_APSCHEDULER = logging.getLogger(f"{__name__}.apscheduler")
_APSCHEDULER.setLevel(logging.ERROR)


def phase_offset_s(target_id: str, interval_s: float) -> float:
    """A stable offset in [0, interval) for a target: same id, same phase."""
    digest = hashlib.blake2b(target_id.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64 * interval_s


def next_grid_time_s(now_s: float, interval_s: float, offset_s: float) -> float:
    """First time >= now on the grid offset + k*interval (epoch seconds)."""
    k = -((offset_s - now_s) // interval_s)  # ceil((now - offset) / interval)
    return offset_s + k * interval_s


def last_grid_time_s(now_s: float, interval_s: float, offset_s: float) -> float:
    """Latest time <= now on the grid: the run APScheduler just fired."""
    return offset_s + ((now_s - offset_s) // interval_s) * interval_s


@dataclass(frozen=True, slots=True)
class Slot:
    """What a job is scheduled from; a change means reschedule."""

    interval_s: float
    offset_s: float


ProbeFn = Callable[[object, float], Awaitable[Sample | tuple[Sample, ...]]]


class ProbeScheduler:
    def __init__(
        self,
        probe: ProbeFn,
        sink: Callable[[Sample], None],
        *,
        agent: str,
        max_concurrency: int | None,
        max_per_provider_region: int | None,
        jitter_s: float = MAX_JITTER_S,
    ) -> None:
        self._probe = probe
        self._sink = sink
        self._agent = agent
        self._jitter_s = jitter_s
        self._global = Gate(max_concurrency if max_concurrency is not None else GLOBAL_CEILING)
        self._per_route_cap = max_per_provider_region
        self.routes: dict[tuple[str, str], RouteLoad] = {}
        self._targets: dict[str, object] = {}
        self._slots: dict[str, Slot] = {}
        self._inflight: set[asyncio.Task] = set()
        self._stopping = False
        self._scheduler = AsyncIOScheduler(
            timezone=UTC,
            job_defaults={"coalesce": True, "max_instances": 1},
            logger=_APSCHEDULER,
        )
        self._scheduler.add_listener(self._skipped, EVENT_JOB_MAX_INSTANCES)
        self._skips: dict[str, int] = {}  # target id -> rounds skipped since its last report
        self._skips_reported_s: dict[str, float] = {}  # target id -> monotonic time of that report

    # ----------------------------------------------------------- lifecycle
    def start(self, targets: Iterable) -> None:
        self._scheduler.start()
        self.apply(targets)

    def apply(self, targets: Iterable) -> None:
        """Make the jobs match `targets`: add new, drop removed, move changed."""
        wanted = {t.id: t for t in targets}
        for target_id in set(self._targets) - set(wanted):
            self._scheduler.remove_job(target_id)
            del self._targets[target_id], self._slots[target_id]
        for target_id, target in wanted.items():
            slot = Slot(target.interval_s, phase_offset_s(target_id, target.interval_s))
            self._targets[target_id] = target  # settings change without a reschedule
            if self._slots.get(target_id) == slot:
                continue
            self._slots[target_id] = slot
            start = datetime.fromtimestamp(next_grid_time_s(time.time(), slot.interval_s, slot.offset_s), UTC)
            self._scheduler.add_job(
                self._run,
                IntervalTrigger(seconds=slot.interval_s, start_date=start, timezone=UTC),
                args=(target_id,),
                id=target_id,
                name=target_id,
                replace_existing=True,
                misfire_grace_time=max(1, int(slot.interval_s / 2)),
            )
        self._size_routes()
        log.info("scheduling %d targets", len(self._targets))

    def _skipped(self, event: JobSubmissionEvent) -> None:
        """A round skipped because the last one still runs: counted, and reported now and then."""
        target_id = event.job_id
        self._skips[target_id] = self._skips.get(target_id, 0) + 1
        now_s = time.monotonic()
        if now_s - self._skips_reported_s.get(target_id, -SKIP_REPORT_EVERY_S) < SKIP_REPORT_EVERY_S:
            return
        skipped = self._skips.pop(target_id)
        slot = self._slots.get(target_id)
        log.warning(
            "%s: %d round(s) skipped since the last report: a round took longer than its %sinterval "
            "(a cache probe's round is two probes back to back)",
            target_id,
            skipped,
            f"{slot.interval_s:g} s " if slot else "",
        )
        self._skips_reported_s[target_id] = now_s

    def _route(self, target) -> RouteLoad:
        key = (target.provider, target.region)
        route = self.routes.get(key)
        if route is None:
            route = self.routes[key] = RouteLoad(self._per_route_cap)
        return route

    def _size_routes(self) -> None:
        """Each route's arrival rate from the schedule (Σ 1/interval), and its cap from that."""
        for route in self.routes.values():
            route.targets, route.rate_per_s = 0, 0.0
        for target in self._targets.values():
            route = self._route(target)
            route.targets += 1
            route.rate_per_s += 1.0 / target.interval_s
        for route in self.routes.values():
            route.resize()

    def route_snapshots(self) -> dict[tuple[str, str], RouteSnapshot]:
        """Each provider-region with targets: its load and cap, as /healthz and /metrics show them."""
        return {key: route.snapshot() for key, route in sorted(self.routes.items()) if route.targets}

    def short_routes(self) -> list[str]:
        """Provider-regions whose cap cannot keep their schedule, in words."""
        return short_routes(self.route_snapshots())

    @property
    def target_count(self) -> int:
        return len(self._targets)

    @property
    def inflight(self) -> int:
        return len(self._inflight)

    @property
    def inflight_tasks(self) -> int:
        """Probes in flight as tasks of this process's event loop (all of them, here)."""
        return len(self._inflight)

    async def shutdown(self, grace_s: float = 10.0) -> None:
        """Stop firing; let in-flight probes finish for `grace_s`, then cancel.

        Cancelled probes are still recorded (error_kind `cancelled`), so a
        restart leaves no silent hole in the data.
        """
        self._stopping = True
        if self._scheduler.running:
            # Paused, not shut down yet: APScheduler's shutdown cancels every job
            # task at once, which left the grace period no probe to wait for.
            self._scheduler.pause()
        await asyncio.sleep(0)  # job tasks created just before the pause start, see _stopping, return
        pending = set(self._inflight)
        if pending:
            _done, still = await asyncio.wait(pending, timeout=grace_s)
            for task in still:
                task.cancel()
            if still:
                await asyncio.gather(*still, return_exceptions=True)
        if self._scheduler.running:
            self._scheduler.shutdown(wait=False)

    # ----------------------------------------------------------------- jobs
    async def run_now(self, target_id: str, *, confirmation: bool = False) -> None:
        """Probe a target immediately (tests, `probe`-style triggers, and the leader's confirmation asks:
        `confirmation` marks the sample so; it waits for the per-provider cap like any probe)."""
        await self._run(target_id, planned_s=time.time(), confirmation=confirmation)

    def probes(self, target_id: str) -> bool:
        """Is this target among this agent's?"""
        return target_id in self._targets

    async def _run(self, target_id: str, planned_s: float | None = None, confirmation: bool = False) -> None:
        target = self._targets.get(target_id)
        slot = self._slots.get(target_id)
        if target is None or slot is None or self._stopping:
            return
        task = asyncio.current_task()
        self._inflight.add(task)
        started_at = datetime.now(UTC)
        try:
            if planned_s is None:
                planned_s = last_grid_time_s(time.time(), slot.interval_s, slot.offset_s)
                planned_s += random.uniform(0, min(self._jitter_s, slot.interval_s / 100))
                delay_s = planned_s - time.time()
                if delay_s > 0:
                    await asyncio.sleep(delay_s)
            route = self._route(target)
            ready_s = time.time()
            lag_ms = max(0.0, (ready_s - planned_s) * 1000)
            await route.gate.acquire()
            try:
                await self._global.acquire()
            except BaseException:
                route.gate.release()
                raise
            try:
                wait_ms = (time.time() - ready_s) * 1000
                started_at = datetime.now(UTC)
                t0 = time.monotonic()
                sample = await self._probe(target, lag_ms)
                took_s = time.monotonic() - t0
            finally:
                self._global.release()
                route.gate.release()
            route.observe(took_s, wait_ms)
            # A cache probe's round is a cold/warm pair (monitor.probe.cache_pair): both are sunk.
            for one in sample if isinstance(sample, tuple) else (sample,):
                self._sink(replace(one, queue_wait_ms=round(wait_ms, 3), confirmation=True if confirmation else None))
        except asyncio.CancelledError:
            # Only shutdown cancels a job (a probe's own deadlines are timeouts).
            # Recorded, and not re-raised: this is the job task's outermost frame
            # we own, and APScheduler logs a raised cancellation as a crash.
            self._sink(cancelled_sample(target, self._agent, started_at))
        except Exception:  # the probe never raises; this guards the sink
            log.exception("probe job for %s failed", target_id)
        finally:
            self._inflight.discard(task)


def cancelled_sample(target, agent: str, started_at: datetime) -> Sample:
    return Sample(
        target=target.id,
        provider=target.provider,
        model=target.model,
        region=target.region,
        prompt=target.prompt,
        started_at=started_at,
        ok=False,
        error_kind=str(ErrorKind.CANCELLED),
        error_message="probe cancelled by shutdown",
        agent=agent,
    )
