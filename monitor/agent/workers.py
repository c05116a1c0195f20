"""Probing in several worker processes, one event loop each, feeding the service's one writer.

A probe's TTFT is stamped on its event loop, so any callback that holds the
loop when the first byte arrives is measured as latency. One loop holds a
couple of thousand targets at 1-minute intervals within the overhead goals
(DESIGN §7); past that the loop is busy often enough that the p99 suffers.
So a big agent shards its targets over `workers` processes by a stable hash
of the target id. Each worker:

- is started with `spawn` (a fresh interpreter: the parent has threads, and
  a fork would copy their locks mid-use), loads the config file itself (so
  secrets never cross a pipe) and probes its shard with its own
  `ProbeScheduler`, lanes and caps: each cap is divided by the number of
  workers, so all of them together never exceed what is configured;
- sends finished samples back over its pipe in small batches; the parent
  hands them to the same sink as single-process probing (writer, metrics,
  reachability) on its own loop, so nothing downstream changes;
- reports its provider-regions' caps and loads about once a second; the
  parent merges them (caps add up) for /healthz and /metrics, and names
  the routes short of their cap as the single process does;
- ignores SIGINT and SIGTERM (a terminal's Ctrl-C or `kill` of the group
  reaches every process): it stops when the parent says so, after the
  parent's grace period, recording probes still in flight as cancelled like
  the single-process path; and it stops the same way if the parent dies
  (its pipe closes), so no worker outlives its agent.

`choose_workers` keeps small configs in one process: workers cost memory and
a second of start-up each, and buy nothing below a loop's capacity.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import math
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection

from monitor.agent.caps import RouteSnapshot, short_routes
from monitor.agent.priority import yield_to_probe_workers
from monitor.sample import Sample

log = logging.getLogger(__name__)

# Up to this many probes a second, one process probes (no workers to start, feed and watch).
# Quiet 2-core machine, probes lasting 0.6-2.6 s (`benchmarks/soak.py --flagship`, issue 22): one loop
# held TTFT overhead p99 2.1 ms at 500 targets a minute (8/s) but 5.3 ms at 1,000 (17/s) and 12.2 ms
# at 2,000 (33/s), over the 5 ms goal: the writer's and the leader's CPU share the loop's core. Two
# workers held 2.8 ms at 1,000 and 4.3 ms at 2,000. So from 10/s (600 targets a minute) on, probes go
# to workers, sized by PROBES_PER_S_PER_LOOP; below it a worker's ~200 MB buys nothing measurable.
ONE_PROCESS_UP_TO_PROBES_PER_S = 10.0
# Probes a second each worker's loop takes on: 5,000 targets (83/s) run in 3 workers where 3 cores allow.
PROBES_PER_S_PER_LOOP = 40.0
SEND_EVERY_S = 0.1
ROUTES_EVERY_TICKS = 10  # each route's cap and load go to the parent about once a second
# Past the grace period: a worker's own shutdown and last batch (well under a second when healthy).
# Grace (5 s) + this + the writer's flush must stay inside the 10 s docker stop and systemd allow.
STOP_EXTRA_S = 2.0


def choose_workers(targets: Iterable, requested: int | None = None, cpus: int | None = None) -> int:
    """Worker processes for these targets: `requested` if given (0 or 1: probe in this process)."""
    if requested is not None:
        return max(1, requested)
    rate = math.fsum(1.0 / t.interval_s for t in targets if t.interval_s > 0)  # exact: 600 a minute is 10/s
    if rate <= ONE_PROCESS_UP_TO_PROBES_PER_S:
        return 1
    # At least two: past the one-process rate the point is to take probing off the writer's core.
    return max(1, min(cpus or os.cpu_count() or 1, max(2, math.ceil(rate / PROBES_PER_S_PER_LOOP))))


def shard_of(target_id: str, shards: int) -> int:
    digest = hashlib.blake2b(target_id.encode(), digest_size=8, person=b"ft-shard").digest()
    return int.from_bytes(digest, "big") % shards


def _share(cap: int | None, workers: int) -> int | None:
    """One worker's part of a configured cap; None (auto) stays auto: each worker sizes its
    caps from its own shard's schedule, which is the same Little's-law sum split by shard."""
    return None if cap is None else max(1, cap // workers)


class WorkerProbes:
    """The parent's side: the interface of `ProbeScheduler` the service uses, over worker processes."""

    def __init__(
        self,
        sink: Callable[[Sample], None],
        *,
        config_path: str,
        agent: str,
        workers: int,
        max_concurrency: int | None,
        max_per_provider_region: int | None,
        yield_cpu: bool = False,
    ) -> None:
        self._sink = sink
        self._yield_cpu = yield_cpu  # lower this process below its workers once they run (monitor.agent.priority)
        self._config_path = config_path
        self._agent = agent
        self.workers = workers
        self._caps = (_share(max_concurrency, workers), _share(max_per_provider_region, workers))
        # Each worker's caps live in that worker; it reports them about once a second.
        self._routes: list[dict[tuple[str, str], RouteSnapshot]] = [{} for _ in range(workers)]
        self._procs: list[multiprocessing.process.BaseProcess] = []
        self._conns: list[Connection] = []
        self._readers: list[threading.Thread] = []
        self._stopped: list[threading.Event] = []
        self._inflight = [0] * workers
        self._target_count = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    # ----------------------------------------------------------- lifecycle
    def start(self, targets: Sequence) -> None:
        self._loop = asyncio.get_running_loop()
        self._target_count = len(targets)
        context = multiprocessing.get_context("spawn")
        for shard in range(self.workers):
            parent_end, child_end = context.Pipe(duplex=True)
            proc = context.Process(
                target=worker_main,
                args=(child_end, WorkerSpec(self._config_path, self._agent, shard, self.workers, *self._caps)),
                name=f"firsttoken-probe-{shard}",
                daemon=True,
            )
            proc.start()
            child_end.close()
            stopped = threading.Event()
            reader = threading.Thread(
                target=self._read, args=(shard, parent_end, stopped), name=f"firsttoken-probe-{shard}-reader"
            )
            reader.daemon = True
            reader.start()
            self._procs.append(proc)
            self._conns.append(parent_end)
            self._readers.append(reader)
            self._stopped.append(stopped)
        if self._yield_cpu:
            yield_to_probe_workers()  # after they started: they keep the normal priority
        log.info(
            "probing %d targets in %d worker processes (caps per worker: %s in flight, %s per provider-region)",
            len(targets),
            self.workers,
            *("auto" if cap is None else cap for cap in self._caps),
        )

    def apply(self, targets: Sequence) -> None:
        """The config file changed: every worker reloads it and takes its shard again."""
        self._target_count = len(targets)
        for conn in self._conns:
            with contextlib.suppress(OSError):
                conn.send(("reload",))

    @property
    def target_count(self) -> int:
        return self._target_count

    @property
    def inflight(self) -> int:
        return sum(self._inflight)

    @property
    def inflight_tasks(self) -> int:
        """Probes in flight as tasks of the parent's loop: none, they run in the workers."""
        return 0

    def route_snapshots(self) -> dict[tuple[str, str], RouteSnapshot]:
        """Every worker's part of each provider-region, merged: caps and loads add up."""
        parts: dict[tuple[str, str], list[RouteSnapshot]] = {}
        for routes in list(self._routes):
            for key, snapshot in routes.items():
                parts.setdefault(key, []).append(snapshot)
        return {key: RouteSnapshot.merge(parts[key]) for key in sorted(parts)}

    def short_routes(self) -> list[str]:
        return short_routes(self.route_snapshots())

    async def shutdown(self, grace_s: float = 10.0) -> None:
        for conn in self._conns:
            with contextlib.suppress(OSError):
                conn.send(("stop", grace_s))
        deadline = grace_s + STOP_EXTRA_S
        await asyncio.to_thread(self._wait_stopped, deadline)
        for shard, proc in enumerate(self._procs):
            proc.join(0.5)  # it said it stopped: its interpreter is exiting
            if proc.is_alive():
                log.warning("probe worker %d did not stop in %.0f s: killed", shard, deadline)
                proc.kill()
                proc.join(1.0)
        for reader in self._readers:
            reader.join(1.0)
        # Samples the readers handed to the loop just before the end.
        await asyncio.sleep(0)

    def _wait_stopped(self, timeout_s: float) -> None:
        """Until every worker said it stopped, or `timeout_s` in all (not each)."""
        deadline = time.monotonic() + timeout_s
        for event in self._stopped:
            event.wait(max(0.0, deadline - time.monotonic()))

    # ------------------------------------------------------------- samples
    def _read(self, shard: int, conn: Connection, stopped: threading.Event) -> None:
        try:
            while True:
                message = conn.recv()
                kind = message[0]
                if kind == "samples":
                    self._inflight[shard] = message[2]
                    if message[3] is not None:
                        self._routes[shard] = message[3]
                    self._loop.call_soon_threadsafe(self._deliver, message[1])
                elif kind == "stopped":
                    return
        except (EOFError, OSError):
            log.warning("probe worker %d went away", shard)
        finally:
            stopped.set()
            with contextlib.suppress(OSError):
                conn.close()

    def _deliver(self, samples: list[Sample]) -> None:
        for sample in samples:
            try:
                self._sink(sample)
            except Exception:  # one bad sample must not lose the rest of the batch
                log.exception("sample sink failed for %s", sample.target)


# ---------------------------------------------------------------- worker
@dataclass(frozen=True, slots=True)
class WorkerSpec:
    """What one worker process is told at start (pickled to it; no secret: it reads the config itself)."""

    config_path: str
    agent: str
    shard: int
    shards: int
    max_concurrency: int | None
    max_per_route: int | None


def worker_main(conn: Connection, spec: WorkerSpec) -> None:
    """Entry point of a worker process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    for noisy in ("httpx", "apscheduler"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    from monitor.eventloop import run_async

    run_async(_worker(conn, spec))


async def _worker(conn: Connection, spec: WorkerSpec) -> None:
    from monitor.agent.heap import HeapFreezer, round_s
    from monitor.agent.scheduler import ProbeScheduler
    from monitor.config import load_config
    from monitor.probe.cache_pair import probe_round
    from monitor.probe.tokens import warm_up as warm_up_tokenizer
    from monitor.probe.transport.lanes import ClientLanes, warm_up
    from monitor.probe.transport.proxy import proxy_passwords
    from monitor.redact import install_redaction

    config_path, agent, shard, shards = spec.config_path, spec.agent, spec.shard, spec.shards

    config = load_config(config_path)
    env_secrets = proxy_passwords(os.environ)  # the proxy environment's passwords, masked like the config's
    redaction = install_redaction(config.secrets | env_secrets)
    warm_up_tokenizer()
    await warm_up()
    lanes = ClientLanes()
    loop = asyncio.get_running_loop()
    commands: asyncio.Queue = asyncio.Queue()
    outbox: queue.SimpleQueue = queue.SimpleQueue()
    pending: list[Sample] = []

    async def probe(target, sched_lag_ms: float) -> tuple[Sample, ...]:
        async with lanes.lane(target.base_url, target.proxy) as client:
            price = config.price(target.provider, target.model)  # the reloaded config's, after a reload
            return await probe_round(
                client,
                target,
                agent=agent,
                secrets=config.secrets | env_secrets,
                sched_lag_ms=sched_lag_ms,
                price=price,
            )

    def mine(cfg) -> list:
        return [t for t in cfg.targets_for_agent(agent) if shard_of(t.id, shards) == shard]

    def receive() -> None:  # a thread: the pipe's recv blocks
        try:
            while True:
                message = conn.recv()
                loop.call_soon_threadsafe(commands.put_nowait, message)
                if message[0] == "stop":
                    return
        except (EOFError, OSError):  # the parent is gone: stop as if told to
            loop.call_soon_threadsafe(commands.put_nowait, ("stop", 10.0))

    def send() -> None:  # a thread: pickling and writing never hold the probes' loop
        while (message := outbox.get()) is not None:
            try:
                conn.send(message)
            except OSError:
                return

    scheduler = ProbeScheduler(
        probe,
        pending.append,
        agent=agent,
        max_concurrency=spec.max_concurrency,
        max_per_provider_region=spec.max_per_route,
    )
    threading.Thread(target=receive, name="firsttoken-worker-commands", daemon=True).start()
    sender = threading.Thread(target=send, name="firsttoken-worker-samples", daemon=True)
    sender.start()
    shard_targets = mine(config)
    heap = HeapFreezer()  # a process of its own: see monitor.agent.heap
    heap.settle(round_s(shard_targets))
    scheduler.start(shard_targets)

    ticks = 0

    def flush() -> None:
        nonlocal ticks
        ticks += 1
        routes = scheduler.route_snapshots() if ticks % ROUTES_EVERY_TICKS == 1 else None
        if pending or routes is not None:
            outbox.put(("samples", pending[:], scheduler.inflight, routes))
            pending.clear()

    grace_s = 10.0
    while True:
        try:
            message = await asyncio.wait_for(commands.get(), SEND_EVERY_S)
        except TimeoutError:
            flush()
            continue
        if message[0] == "stop":
            grace_s = float(message[1])
            break
        if message[0] == "reload":
            try:
                config = load_config(config_path)
            except Exception as exc:  # the parent validated it; a file changed since is kept out
                log.error("probe worker %d: config reload refused: %s", shard, exc)
                continue
            redaction.update(config.secrets | env_secrets)
            shard_targets = mine(config)
            scheduler.apply(shard_targets)
            heap.reshape(round_s(shard_targets))
    heap.close()
    await scheduler.shutdown(grace_s)
    await lanes.aclose()
    flush()
    outbox.put(("stopped",))
    outbox.put(None)
    sender.join(5.0)
