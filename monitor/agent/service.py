"""`firsttoken run`: scheduler + writer + leader work + /metrics and /healthz.

The process is built to run for months: probes never wait on the database
(the writer queues and spools), an invalid config reload is refused and the
running one kept, and SIGTERM lets probes in flight finish (or records them
as cancelled) and flushes every sample before exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from monitor import __version__
from monitor.agent.heap import HeapFreezer, round_s
from monitor.agent.metrics import ProbeMetrics
from monitor.agent.periodic import PeriodicJobs
from monitor.agent.reachability import Reachability
from monitor.agent.scheduler import ProbeScheduler
from monitor.agent.workers import WorkerProbes, choose_workers
from monitor.config import Config, ConfigError, load_config
from monitor.http.health import Health
from monitor.http.server import ListenAddress
from monitor.leader.election import LEADER_RETRY_S, LeaderElection
from monitor.leader.identity import instance_name
from monitor.leader.jobs import leader_jobs
from monitor.probe.cache_pair import probe_round
from monitor.probe.cost import over_budget
from monitor.probe.tokens import warm_up as warm_up_tokenizer
from monitor.probe.transport.lanes import ClientLanes, warm_up
from monitor.probe.transport.proxy import proxy_passwords
from monitor.redact import install_redaction
from monitor.sample import Sample
from monitor.storage.db import db_error_line
from monitor.storage.replica import read_database_url

log = logging.getLogger(__name__)

CONFIG_POLL_S = 2.0
GAUGES_EVERY_S = 1.0
HEARTBEAT_S = 30.0
CONFIRM_POLL_S = 2.0  # how soon a confirmation ask is probed from the other vantage points (DESIGN §11)
CONFIRM_MAX_AGE_S = 60.0  # an ask older than this is moot (the agent was down): the next round will do
SPOOL_UNHEALTHY_BYTES = 64 * 1024 * 1024


@dataclass
class ServiceOptions:
    config_path: str
    listen_host: str = "127.0.0.1"
    listen_port: int = 9464
    spool_dir: str | None = None
    spool_max_bytes: int | None = None  # None: the spool's own default (1 GiB)
    # Probes in flight get this long to finish on SIGTERM: with the flush after it, the
    # process exits well inside the 10 s that docker stop and systemd wait before SIGKILL.
    shutdown_grace_s: float = 5.0
    probe_workers: int | None = None  # None: chosen from the schedule (workers.choose_workers); 1: this process
    # The agent has the process to itself (`firsttoken run`): freeze its long-lived heap so full
    # collections stay off the probes' loop (monitor.agent.heap) and, with probe workers, let them
    # have the CPU first (monitor.agent.priority). A test process hosting services leaves it off.
    dedicated_process: bool = False
    # SIGTERM and SIGINT stop the service. False: the program hosting it handles them and calls
    # stop() when it chooses (the demo stops its second agent first).
    own_signals: bool = True


class Service:
    def __init__(self, options: ServiceOptions, config: Config) -> None:
        from monitor.storage import SampleWriter, make_engine

        self.options = options
        self.config = config
        self.engine = make_engine(config.database_url)
        # /routes, status JSON and badges only read: a replica may serve them (FIRSTTOKEN_READ_DATABASE_URL).
        read_url = read_database_url(config.database_url)
        self.read_engine = self.engine if read_url == config.database_url else make_engine(read_url)
        spool_dir = options.spool_dir or str(Path(f"firsttoken-spool-{config.agent}").resolve())
        spool_limit = {} if options.spool_max_bytes is None else {"spool_max_bytes": options.spool_max_bytes}
        self.writer = SampleWriter(self.engine, spool_dir, **spool_limit)
        self.metrics = ProbeMetrics()
        self.metrics.set_slos(config.slos)
        self.reachability = Reachability()
        self.lanes = ClientLanes()
        self.leader = LeaderElection(self.engine, instance_name(config.agent))
        workers = choose_workers(config.targets_for_agent(config.agent), options.probe_workers)
        if workers > 1:
            self.scheduler = WorkerProbes(
                self._on_sample,
                config_path=options.config_path,
                agent=config.agent,
                workers=workers,
                max_concurrency=config.defaults.max_concurrency,
                max_per_provider_region=config.defaults.max_per_provider_region,
                yield_cpu=options.dedicated_process,
            )
        else:
            self.scheduler = ProbeScheduler(
                self._probe,
                self._on_sample,
                agent=config.agent,
                max_concurrency=config.defaults.max_concurrency,
                max_per_provider_region=config.defaults.max_per_provider_region,
            )
        self.status: ListenAddress | None = None  # /metrics, /healthz, /routes, status pages, /mcp; set by run()
        self.otel = None  # monitor.agent.otel.OtelMetrics when the OTEL_* environment asks for it
        self._stop = asyncio.Event()
        self._confirm_after: int | None = None  # the newest confirmation ask seen
        self._confirming: set[asyncio.Task] = set()
        self._reload = asyncio.Event()
        self._config_mtime = _mtime(options.config_path)
        # Tasks besides the probes in flight: flat in a healthy process, so a leak
        # shows. Counted on the loop (housekeeping) and read by /healthz from its
        # own thread: asyncio's task registry is not safe to walk from another one.
        self._background_tasks = 0
        self._short_routes: set[tuple[str, str]] = set()
        # The proxy environment's passwords are masked like the config's secrets (monitor.probe.transport.proxy).
        self._env_secrets = proxy_passwords(os.environ)
        self._secrets = config.secrets | self._env_secrets
        self._redaction = install_redaction(self._secrets)
        self.periodic = self._periodic_jobs()
        self.heap = HeapFreezer(options.dedicated_process)

    # ------------------------------------------------------------- probing
    async def _probe(self, target, sched_lag_ms: float) -> tuple[Sample, ...]:
        async with self.lanes.lane(target.base_url, target.proxy) as client:
            return await probe_round(
                client,
                target,
                agent=self.config.agent,
                secrets=self._secrets,
                sched_lag_ms=sched_lag_ms,
                price=self.config.price(target.provider, target.model),
            )

    def _on_sample(self, sample: Sample) -> None:
        self.writer.submit(sample)
        self.metrics.observe(sample)
        self.reachability.observe(sample)
        if self.otel is not None:
            self.otel.observe(sample)

    # ----------------------------------------------------------- lifecycle
    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT) if self.options.own_signals else ():
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signum, self._stop.set)
        with contextlib.suppress(NotImplementedError, RuntimeError, AttributeError):
            loop.add_signal_handler(signal.SIGHUP, self._reload.set)
        warm_up_tokenizer()
        await warm_up()
        self.status = ListenAddress(
            self.options.listen_host,
            self.options.listen_port,
            metrics=self.metrics.chunks,
            health=self.health,
            read_engine=self.read_engine,
            engine=self.engine,  # status subscriptions write (DESIGN §16)
            config=lambda: self.config,
        )
        self.status.start()
        targets = self.config.targets_for_agent(self.config.agent)
        from monitor.agent.otel import from_environment

        self.otel = from_environment(targets)
        await self._run_blocking("targets", lambda: self._sync_targets(targets))
        self.heap.settle(round_s(targets))
        self.scheduler.start(targets)
        self.metrics.targets.set(len(targets))
        log.info(
            "firsttoken %s running as agent %r: %d targets, /metrics on http://%s:%d",
            __version__,
            self.config.agent,
            len(targets),
            self.options.listen_host,
            self.status.port,
        )
        background = [asyncio.create_task(self._watch_config(), name="config-watch")]
        self.periodic.start()
        await self._stop.wait()
        log.info("shutting down: letting probes in flight finish")
        self.heap.close()
        for task in background:
            task.cancel()
        await asyncio.gather(*background, return_exceptions=True)
        await self.periodic.shutdown()
        await self.scheduler.shutdown(self.options.shutdown_grace_s)
        await self.lanes.aclose()
        await asyncio.to_thread(self.writer.close)
        if self.otel is not None:
            await asyncio.to_thread(self.otel.shutdown)
        await asyncio.to_thread(self.leader.release)
        self.status.stop()
        self.engine.dispose()
        self.read_engine.dispose()
        log.info("stopped")
        return 0

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopping(self) -> asyncio.Event:
        """Set once the service has been asked to stop (a signal, or `stop()`)."""
        return self._stop

    # -------------------------------------------------------------- config
    async def _watch_config(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._reload.wait(), CONFIG_POLL_S)
            mtime = _mtime(self.options.config_path)
            if self._reload.is_set() or mtime != self._config_mtime:
                self._reload.clear()
                self._config_mtime = mtime
                self.reload()

    def reload(self) -> bool:
        """Apply the config file as it is now; keep the running one if it's invalid."""
        try:
            config = load_config(self.options.config_path)
        except ConfigError as exc:
            self.metrics.config_reloads.labels("refused").inc()
            for line in exc.errors:
                log.error("config reload refused, keeping the running config: %s", line)
            return False
        except OSError as exc:
            self.metrics.config_reloads.labels("refused").inc()
            log.error("config reload refused, keeping the running config: %s", exc)
            return False
        if over := over_budget(config):
            verdict, refuse = over
            if refuse:  # the same rule as at start: a reload must not take the spend past the budget
                self.metrics.config_reloads.labels("refused").inc()
                log.error("config reload refused, keeping the running config: %s (budget.action refuse)", verdict)
                return False
            log.warning("config reloaded over budget: %s", verdict)
        self._secrets = config.secrets | self._env_secrets
        self._redaction.update(self._secrets)
        if config.alerting != self.config.alerting:
            # The leader's jobs are built once, at start (their timers and the engine's state).
            log.warning("config reloaded: the alerting: timings take effect when firsttoken run restarts")
        self.config = config
        targets = config.targets_for_agent(config.agent)
        self._sync_targets(targets)
        self.scheduler.apply(targets)
        self.heap.reshape(round_s(targets))
        if self.otel is not None:
            self.otel.set_targets(targets)
        self.metrics.targets.set(len(targets))
        self.metrics.set_slos(config.slos)
        self.metrics.config_reloads.labels("applied").inc()
        log.info("config reloaded: %d targets", len(targets))
        return True

    # -------------------------------------------------------- housekeeping
    def _periodic_jobs(self) -> PeriodicJobs:
        """Gauges, heartbeat and leadership on every agent; the once-only work (monitor.leader.jobs) on the leader."""
        jobs = PeriodicJobs(lambda: self.leader.is_leader)
        # Leader-only work writes through the fenced engine: each transaction checks the lease's token.
        engine = self.leader.fenced_engine()

        def blocking(name: str, fn: Callable[[], object]) -> Callable[[], Awaitable[None]]:
            return lambda: self._run_blocking(name, fn)

        jobs.every("gauges", GAUGES_EVERY_S, self._update_gauges, serial=False)
        jobs.every("heartbeat", HEARTBEAT_S, blocking("heartbeat", self._heartbeat))
        jobs.every("leader", LEADER_RETRY_S, self._poll_leader)
        jobs.every("confirmations", CONFIRM_POLL_S, self._confirm, serial=False)
        for name, (interval_s, job) in leader_jobs(self.config).items():
            jobs.every(name, interval_s, blocking(name, lambda job=job: job(engine, self.config)), leader_only=True)
        return jobs

    async def _update_gauges(self) -> None:
        stats = self.writer.stats()
        self.metrics.queue_depth.set(stats.queue_depth)
        self.metrics.spool_bytes.set(stats.spool_bytes)
        self.metrics.written.set(stats.written_total)
        self.metrics.dropped.set(stats.dropped_total)
        self.metrics.in_flight.set(self.scheduler.inflight)
        self._background_tasks = len(asyncio.all_tasks()) - self.scheduler.inflight_tasks
        short = set()
        for (provider, region), route in self.scheduler.route_snapshots().items():
            self.metrics.route_cap.labels(provider, region).set(route.cap)
            self.metrics.route_needed.labels(provider, region).set(round(route.needed, 2))
            is_short = route.short()
            self.metrics.route_short.labels(provider, region).set(1 if is_short else 0)
            if is_short:
                short.add((provider, region))
                if (provider, region) not in self._short_routes:
                    log.warning(
                        "%s cannot keep its schedule under its cap: probes wait %.0f ms on average for a slot",
                        route.describe(f"{provider}@{region}"),
                        route.queue_wait_ms,
                    )
        for provider, region in self._short_routes - short:
            log.info("%s@%s keeps its schedule again", provider, region)
        self._short_routes = short

    async def _confirm(self) -> None:
        """Probe once more what the leader asks to have confirmed from every other vantage point (DESIGN §11)."""
        from monitor.storage.queries import confirmations

        try:
            if self._confirm_after is None:  # start after the asks that were there before this agent
                self._confirm_after = await asyncio.to_thread(confirmations.newest_id, self.engine)
                return
            since = datetime.now(UTC) - timedelta(seconds=CONFIRM_MAX_AGE_S)
            asks = await asyncio.to_thread(confirmations.after, self.engine, self._confirm_after, since)
        except Exception as exc:  # the database may be down: the scheduled probes go on
            log.debug("confirmation asks unreadable: %s", type(exc).__name__)
            return
        for ask in asks:
            self._confirm_after = max(self._confirm_after, ask.id)
            if ask.seen_from != self.config.agent and self.scheduler.probes(ask.target):
                task = asyncio.ensure_future(self.scheduler.run_now(ask.target, confirmation=True))
                self._confirming.add(task)
                task.add_done_callback(self._confirming.discard)

    async def _poll_leader(self) -> None:
        was_leader = self.leader.is_leader
        leader = await asyncio.to_thread(self.leader.poll)
        self.metrics.leader.set(1 if leader else 0)
        if leader and not was_leader:
            self.periodic.became_leader()

    async def _run_blocking(self, name: str, fn: Callable[[], object]) -> None:
        try:
            await asyncio.to_thread(fn)
        except Exception as exc:  # a database outage must not stop the service
            log.warning("%s failed: %s: %s", name, type(exc).__name__, db_error_line(exc))

    def _sync_targets(self, targets) -> None:
        """Record the configured targets (and their protocol) for the dashboard."""
        from monitor.storage.queries.agents import sync_targets

        try:
            sync_targets(self.engine, targets)
        except Exception as exc:  # the database may be down; samples still spool
            log.warning("could not record targets: %s", type(exc).__name__)

    def _heartbeat(self) -> None:
        from monitor.storage.queries.agents import heartbeat_agent

        heartbeat_agent(
            self.engine,
            self.config.agent,
            healthy=self.reachability.healthy(datetime.now(UTC)),
            version=__version__,
            now=datetime.now(UTC),
        )

    # -------------------------------------------------------------- health
    def health(self) -> Health:
        stats = self.writer.stats()
        problems = []
        if self.writer.is_stuck():
            problems.append("writer is stuck: no successful write while samples wait")
        if stats.spool_bytes > SPOOL_UNHEALTHY_BYTES:
            problems.append(f"spool holds {stats.spool_bytes} bytes: the database is not keeping up or is down")
        detail = {
            "agent": self.config.agent,
            "targets": self.scheduler.target_count,
            "in_flight": self.scheduler.inflight,
            # Per provider region: its cap, what the schedule needs in flight (Little's law), who waits.
            "caps": {
                f"{provider}@{region}": {
                    "cap": route.cap,
                    "auto": route.auto,
                    "needed": round(route.needed, 2),
                    "in_flight": route.in_flight,
                    "waiting": route.waiting,
                    "queue_wait_ms": round(route.queue_wait_ms, 1),
                }
                for (provider, region), route in self.scheduler.route_snapshots().items()
            },
            "short_of_cap": self.scheduler.short_routes(),
            # Leak detectors for long runs: both stay flat once probing settles.
            "background_tasks": self._background_tasks,
            "http_lanes": self.lanes.size,
            "leader": self.leader.is_leader,
            "leader_token": self.leader.token if self.leader.is_leader else None,
            "reaches_providers": self.reachability.healthy(datetime.now(UTC)),
            "database_up": stats.database_up,
            "queue_depth": stats.queue_depth,
            "spool_bytes": stats.spool_bytes,
            "dropped_samples": stats.dropped_total,
            "last_write_at": stats.last_write_at,
            "problems": problems,
        }
        return Health(ok=not problems, detail=detail)


def _mtime(path: str) -> float | None:
    try:
        return Path(path).stat().st_mtime
    except OSError:
        return None
