"""Backfill: a day of history through the production probe, writer and alert engine, in simulated time.

Each target is probed on its own grid (the scheduler's stable phase, so
history and live samples interleave the same way), in time order across all
targets. Probes go through `probe_round` with a `VirtualClock` and the
`VirtualTransport`; samples go through `SampleWriter`; after each step of
simulated time the alert engine evaluates with `now` at that step, exactly as
the live leader job would have, so alerts fire and resolve in the past and
their notifications go out (printed by the log notifier) as they happen.

Probing is pure CPU (parsing real wire bytes), so it is spread over worker
processes in blocks of simulated time while this process writes and
evaluates the blocks already done, in order.

One seed, one history, whenever the demo starts and however many workers
probe it: the history ends on its probe grid (`history_end_s`), so every
probe, incident and alert round lies at the same offsets from its end; the
blocks, and with them each block's random draws, do not depend on the
number of workers; and samples are numbered in probe order, not at random
(the alert engine reads a target's samples in (started_at, id) order, and
two agents probing one target start at the same instant).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import multiprocessing
import pickle
import signal
import socket
import struct
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import httpx

from monitor.agent.scheduler import next_grid_time_s, phase_offset_s
from monitor.childproc import die_with_parent
from monitor.demo.incidents import UTC_PEAK_S, DemoSource, Incident
from monitor.demo.vantage import Vantage
from monitor.demo.virtual_time import VirtualClock, VirtualTransport
from monitor.probe.cache_pair import is_cache_probe, probe_round
from monitor.sample import Sample
from monitor.simulator.catalogue import BehaviourSource

MIN_INTERVAL_S = 60.0
MAX_INTERVAL_S = 300.0
STEPS = 288  # a day at 5-minute spacing; shorter histories get denser spacing, down to a minute
# Small blocks: steady progress, and 4 workers stay busy while earlier ones are written. A fixed
# number, not one per worker: the blocks (each one's draws) are the same whatever the pool.
BLOCKS = 96


def auto_interval_s(history_s: float) -> float:
    """Spacing that keeps the backfill near STEPS probes per target, between 1 and 5 minutes."""
    return min(MAX_INTERVAL_S, max(MIN_INTERVAL_S, history_s / STEPS))


def history_end_s(now_s: float, interval_s: float, step_s: float | None = None) -> float:
    """Where a history written at `now_s` ends: the last multiple of both the probe interval and the
    alert step (`alerting.evaluate_every`).

    Each target's grid is a fixed phase in epoch time, and alert rounds fall on the step's epoch grid,
    so a history ending on a multiple of both has its probes and its rounds at the same offsets from
    its end whenever it is written; so do its incidents, placed from that end.
    """
    grid_s = interval_s if step_s is None else math.lcm(round(interval_s), round(step_s))
    return (now_s // grid_s) * grid_s


def probe_times(targets: Sequence, start_s: float, end_s: float, interval_s: float) -> Iterator[tuple[float, int]]:
    """(epoch seconds, target index) for every probe in [start_s, end_s), in time order."""

    def grid(i: int, target) -> Iterator[tuple[float, int]]:
        t_s = next_grid_time_s(start_s, interval_s, phase_offset_s(target.id, interval_s))
        while t_s < end_s:
            yield t_s, i
            t_s += interval_s

    yield from heapq.merge(*(grid(i, t) for i, t in enumerate(targets)))


async def probe_span(
    targets: Sequence,
    source: BehaviourSource,
    start_s: float,
    end_s: float,
    interval_s: float,
    *,
    agent: str,
    seed: int | None = None,
    prices: Sequence | None = None,
    vantage: Sequence[Vantage] = (),
) -> list[tuple[float, Sample]]:
    """Every probe of [start_s, end_s) in simulated time: (planned time, sample), in time order.
    `prices[i]` (a config Price or None) gives target i's samples their cost_usd. Each `vantage`
    is one more agent probing its targets over its own path, interleaved in time. Sample ids are
    the span's start (ms) and their rank in it: unique, and in probe order, whatever the run."""
    clock = VirtualClock()
    stamp = round(start_s * 1000)
    out = []
    lanes = [(agent, list(range(len(targets))), None)]
    index = {t.id: i for i, t in enumerate(targets)}
    lanes += [(v.agent, [index[t] for t in v.target_ids if t in index], v.path_at) for v in vantage]
    clients = [
        httpx.AsyncClient(transport=VirtualTransport(source, clock, seed=None if seed is None else seed + k, path_ms=p))
        for k, (_, _, p) in enumerate(lanes)
    ]
    try:
        plans = [
            _lane_times(targets, chosen, lane, start_s, end_s, interval_s) for lane, (_, chosen, _) in enumerate(lanes)
        ]
        for t_s, lane, i in heapq.merge(*plans):
            clock.set_s(t_s)
            price = prices[i] if prices else None
            pair = await probe_round(
                clients[lane], targets[i], agent=lanes[lane][0], sched_lag_ms=0.0, clock=clock, price=price
            )
            # A cache probe's round is a cold/warm pair: the warm one starts when the cold one ended.
            for k, sample in enumerate(pair):
                numbered = replace(sample, id=f"{stamp:016x}{len(out):016x}")
                out.append((t_s if k == 0 else sample.started_at.timestamp(), numbered))
    finally:
        for client in clients:
            await client.aclose()
    return out


def _lane_times(targets, chosen, lane, start_s, end_s, interval_s) -> Iterator[tuple[float, int, int]]:
    """(time, lane, target index) of one agent's probes of its `chosen` targets, in time order."""
    for t_s, i in probe_times([targets[j] for j in chosen], start_s, end_s, interval_s):
        yield t_s, lane, chosen[i]


@dataclass(frozen=True, slots=True)
class Job:
    """What a worker process needs, as hashable values: it loads the targets itself, once."""

    config_path: str
    target_ids: tuple[str, ...]
    incidents: tuple[Incident, ...]
    interval_s: float
    agent: str
    seed: int = 0
    vantage: tuple[Vantage, ...] = ()  # more agents probing some targets over their own paths
    peak_s: float = UTC_PEAK_S  # a moment the daily cycle peaks (incidents.demo_peak_s)

    def load(self) -> tuple[list, BehaviourSource, list]:
        from monitor.config import load_config

        config = load_config(self.config_path)
        by_id = {t.id: t for t in config.targets}
        targets = [by_id[i] for i in self.target_ids]
        source = DemoSource(self.incidents, peak_s=self.peak_s)
        return targets, source, [config.price(t.provider, t.model) for t in targets]


_loaded: dict[Job, tuple[list, BehaviourSource, list]] = {}

WORKER_STOP_S = 1.0  # a worker still busy this long after close() is killed: its block is thrown away anyway


def _run_block(job: Job, start_s: float, end_s: float, block: int) -> list[tuple[float, Sample]]:
    if job not in _loaded:
        _loaded[job] = job.load()
    return asyncio.run(job_span(job, _loaded[job], start_s, end_s, block))


def job_span(job: Job, loaded, start_s: float, end_s: float, block: int):
    """probe_span for one block of a job, from what `job.load()` returned (targets, source, prices)."""
    targets, source, prices = loaded
    return probe_span(
        targets,
        source,
        start_s,
        end_s,
        job.interval_s,
        agent=job.agent,
        seed=job.seed + block,
        prices=prices,
        vantage=job.vantage,
    )


def _frame(obj) -> bytes:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return struct.pack("!Q", len(data)) + data


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise EOFError
        buf += chunk
    return bytes(buf)


async def _arecv_exactly(sock: socket.socket, n: int) -> bytes:
    loop = asyncio.get_running_loop()
    buf = bytearray()
    while len(buf) < n:
        chunk = await loop.sock_recv(sock, min(n - len(buf), 1 << 20))
        if not chunk:
            raise EOFError
        buf += chunk
    return bytes(buf)


def _worker_main(sock: socket.socket, inherited: list[socket.socket]) -> None:
    """Serve blocks over this worker's own socket until the parent closes it.

    A signal to the whole process group (Ctrl-C, `docker stop`, systemd) is
    the parent's to act on: the worker ignores it and is stopped by the parent.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    die_with_parent()
    for other in inherited:  # siblings' socket ends, copied by fork: holding them would hide the parent's EOF
        other.close()
    while True:
        try:
            (size,) = struct.unpack("!Q", _recv_exactly(sock, 8))
            request = pickle.loads(_recv_exactly(sock, size))
        except (EOFError, OSError):
            return
        try:
            reply = ("ok", _run_block(*request))
        except Exception:
            import traceback

            reply = ("error", traceback.format_exc())
        try:
            sock.sendall(_frame(reply))
        except OSError:
            return


class WorkerPool:
    """Processes that probe blocks of history, started before the event loop and any thread.

    On Linux they are forked from a process that has imported the probe
    stack and has no threads yet: no start-up cost, no fork-with-threads
    hazard. Elsewhere they are spawned.

    Each worker has a socket of its own and nothing else shared with the
    others: no queue lock that a worker killed mid-read would hold forever
    (what hung `multiprocessing.Pool.terminate` on SIGTERM to the group).
    Workers ignore SIGINT and SIGTERM, exit when their socket closes, and die
    with the parent, so `close()` returns within WORKER_STOP_S and no worker
    outlives the demo.
    """

    def __init__(self, workers: int) -> None:
        ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        self.size = max(1, workers)
        self._procs: list = []
        self._socks: list[socket.socket] = []
        for _ in range(self.size):
            ours, theirs = socket.socketpair()
            proc = ctx.Process(target=_worker_main, args=(theirs, list(self._socks)), daemon=True)
            proc.start()
            theirs.close()
            ours.setblocking(False)
            self._procs.append(proc)
            self._socks.append(ours)
        self._idle: asyncio.Queue | None = None

    async def run_block(self, job: Job, start_s: float, end_s: float, block: int) -> list[tuple[float, Sample]]:
        if self._idle is None:
            self._idle = asyncio.Queue()
            for sock in self._socks:
                self._idle.put_nowait(sock)
        sock = await self._idle.get()
        loop = asyncio.get_running_loop()
        try:
            await loop.sock_sendall(sock, _frame((job, start_s, end_s, block)))
            (size,) = struct.unpack("!Q", await _arecv_exactly(sock, 8))
            status, value = pickle.loads(await _arecv_exactly(sock, size))
        except (EOFError, OSError) as exc:
            raise RuntimeError("a backfill worker died") from exc
        # Only a worker whose reply was read serves again: one cancelled
        # mid-block would answer out of turn (cancelling means shutdown anyway).
        self._idle.put_nowait(sock)
        if status != "ok":
            raise RuntimeError(f"a backfill worker failed:\n{value}")
        return value

    def close(self) -> None:
        """Stop every worker: idle ones see their socket close, busy ones are killed after WORKER_STOP_S."""
        for sock in self._socks:
            sock.close()
        self._socks = []
        deadline = time.monotonic() + WORKER_STOP_S
        for proc in self._procs:
            proc.join(max(0.0, deadline - time.monotonic()))
            if proc.is_alive():
                proc.kill()
                proc.join()
        self._procs = []


@dataclass
class BackfillResult:
    probes: int = 0
    ok: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    evaluations: int = 0


async def backfill(
    job: Job,
    *,
    start_s: float,
    end_s: float,
    submit: Callable[[Sample], None],
    flush: Callable[[], object] = lambda: None,
    evaluate: Callable[[datetime], object] | None = None,
    evaluate_every_s: float | None = None,
    progress: Callable[[int, int], None] | None = None,
    pool: WorkerPool | None = None,
) -> BackfillResult:
    """Probe the job's targets over [start_s, end_s), `submit` each sample, `evaluate(now)` every step.

    `flush()` runs before each evaluation so the engine reads every sample
    taken up to its `now`. Without a `pool` everything runs in this process.
    """
    step_s = evaluate_every_s or job.interval_s
    result = BackfillResult()
    # Rounds on the epoch grid of the step, as the live leader's and `backtest --samples`' replay fall.
    next_eval_s = (math.floor(start_s / step_s) + 1) * step_s
    targets, source, prices = job.load()
    total = sum(1 + is_cache_probe(targets[i]) for _, i in probe_times(targets, start_s, end_s, job.interval_s))
    by_id = {t.id: t for t in targets}
    for v in job.vantage:
        mine = [by_id[t] for t in v.target_ids if t in by_id]
        total += sum(1 + is_cache_probe(mine[i]) for _, i in probe_times(mine, start_s, end_s, job.interval_s))

    def evaluate_until(t_s: float) -> None:
        nonlocal next_eval_s
        while next_eval_s <= t_s:
            if evaluate is not None:
                flush()
                evaluate(datetime.fromtimestamp(next_eval_s, UTC))
                result.evaluations += 1
            next_eval_s += step_s

    held: list[tuple[float, int, Sample]] = []  # warm halves, until the planned times pass them
    order = itertools.count()

    def take(t_s: float, sample: Sample) -> None:
        """In time order: a cache probe's warm half starts seconds after its planned round, so
        it waits here until the probes planned before it are in."""
        heapq.heappush(held, (t_s, next(order), sample))
        if sample.cache_state == "warm":
            return  # its time is its start, not a planned time: it says nothing of what is still to come
        while held and held[0][0] <= t_s:
            _take(*heapq.heappop(held)[::2])

    def _take(t_s: float, sample: Sample) -> None:
        evaluate_until(t_s)
        submit(sample)
        result.probes += 1
        if sample.ok:
            result.ok += 1
        else:
            kind = sample.error_kind or "unknown"
            result.errors[kind] = result.errors.get(kind, 0) + 1
        if progress is not None:
            progress(result.probes, total)

    blocks = _blocks(start_s, end_s, BLOCKS, job.interval_s)
    if pool is None:
        for n, (a, b) in enumerate(blocks):
            await asyncio.sleep(0)  # probing never waits: let signal handlers and cancellation in
            for t_s, sample in await job_span(job, (targets, source, prices), a, b, n):
                take(t_s, sample)
    else:
        await _in_pool(pool, job, blocks, take)
    while held:
        _take(*heapq.heappop(held)[::2])
    evaluate_until(end_s)
    flush()
    return result


async def _in_pool(pool: WorkerPool, job: Job, blocks: list[tuple[float, float]], take) -> None:
    """Keep every worker busy one block ahead, and take finished blocks in order."""
    pending: deque[asyncio.Task] = deque()
    queue = deque(enumerate(blocks))
    try:
        while queue or pending:
            while queue and len(pending) <= pool.size:
                n, (a, b) = queue.popleft()
                pending.append(asyncio.ensure_future(pool.run_block(job, a, b, n)))
            for t_s, sample in await pending.popleft():
                take(t_s, sample)
    finally:
        for task in pending:
            task.cancel()


def _blocks(start_s: float, end_s: float, count: int, interval_s: float) -> list[tuple[float, float]]:
    """[start, end) cut into about `count` blocks, each at least one probe interval long."""
    size = max(interval_s, (end_s - start_s) / count)
    edges = [start_s]
    while edges[-1] + size < end_s:
        edges.append(edges[-1] + size)
    edges.append(end_s)
    return list(itertools.pairwise(edges))
