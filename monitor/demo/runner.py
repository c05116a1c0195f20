"""`firsttoken demo` end to end: simulator, config, database, backfill, live service, dashboard.

Order matters for the time to a live dashboard: Streamlit takes seconds to
boot, so it starts before the backfill and boots while the history is being
written; its address is announced once both are ready. Live, the demo's own
agent runs in this process and demo-far, the second vantage point, as a
second `firsttoken run` (far_agent.py) once the first leads. Ctrl-C at any
point stops what has started, in reverse order, and exits 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from dashboard.launch import stop_process
from monitor.demo import wiring
from monitor.demo.backfill import Job, WorkerPool, auto_interval_s, backfill, history_end_s
from monitor.demo.cast import PROVIDERS, long_prompt_text
from monitor.demo.demo_config import (
    DEMO_AGENT,
    EVALUATE_EVERY,
    LONG_PROMPT_FILE,
    REAL_INTERVAL,
    config_text,
    real_providers_in,
    sqlite_url,
)
from monitor.demo.far_agent import FarAgent
from monitor.demo.incidents import DemoSource, demo_peak_s, schedule
from monitor.demo.progress import ProgressBar
from monitor.demo.vantage import FAR_PATH_MS, LIVE_CONGESTION_AFTER_S, LIVE_CONGESTION_S, Vantage, far_vantage
from monitor.units import parse_duration

log = logging.getLogger(__name__)
SIM_PROVIDERS = frozenset(p.name for p in PROVIDERS)
DASHBOARD_BOOT_TIMEOUT_S = 120.0
# demo-far starts once the demo's agent leads; a lease left by a demo killed outright runs out
# first (LEASE_TTL_S + LEADER_RETRY_S), and demo-far starts after this long whatever happens.
FAR_START_WAIT_S = 30.0


class Interrupted(Exception):
    """Ctrl-C (or SIGTERM) before the live service took over its own signals."""


@dataclass
class DemoOptions:
    backfill_s: float = 86400.0
    backfill_interval_s: float | None = None  # None: auto_interval_s(backfill_s)
    db_path: Path = Path("firsttoken-demo.db")
    workdir: Path = Path("firsttoken-demo")
    port: int = 8501
    host: str = "127.0.0.1"
    live_interval: str = "30s"
    dashboard: bool = True
    live: bool = True  # False: exit once the history is written
    browser: bool = True
    real_providers: bool = False
    workers: int = field(default_factory=lambda: min(4, os.cpu_count() or 1))  # 0: backfill in this process
    seed: int | None = None

    @property
    def history_interval_s(self) -> float:
        return self.backfill_interval_s or auto_interval_s(self.backfill_s)

    @property
    def dashboard_url(self) -> str:
        return f"http://localhost:{self.port}"


DASHBOARD_LOG = "dashboard.log"  # beside the demo's config


def say(text: str) -> None:
    print(f"firsttoken demo: {text}", file=sys.stderr, flush=True)


async def run_demo(options: DemoOptions, pool: WorkerPool | None = None) -> int:
    from monitor.config import load_config
    from monitor.simulator import Simulator

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, stop.set)

    now_s = time.time()
    # The history ends on its probe grid; its incidents, daily cycle and demo-far's congested hour are
    # placed from that end: one seed, one history (monitor/demo/backfill.py). The live ones start now.
    epoch_s = history_end_s(now_s, options.history_interval_s, parse_duration(EVALUATE_EVERY))
    incidents = schedule(epoch_s, options.backfill_s, now_s)
    simulator = Simulator(source=DemoSource(incidents, peak_s=demo_peak_s(epoch_s)), seed=options.seed)
    sim_port = await simulator.start("127.0.0.1", 0)
    dashboard = None
    try:
        say(f"simulated providers on http://127.0.0.1:{sim_port} ({', '.join(sorted(SIM_PROVIDERS))})")
        config_path = write_workdir(options, f"http://127.0.0.1:{sim_port}")
        config = load_config(config_path)
        real = sorted({t.provider for t in config.targets} - SIM_PROVIDERS)
        if real:
            say(f"also probing real providers every {REAL_INTERVAL}: {', '.join(real)}")
        await asyncio.to_thread(migrate, config.database_url)
        sim_ids = tuple(t.id for t in config.targets if t.provider in SIM_PROVIDERS)
        # The second vantage point (monitor/demo/vantage.py): in the history, then live.
        far = far_vantage(sim_ids, epoch_s, options.backfill_s, now_s)
        if options.dashboard:
            log_path = config_path.parent / DASHBOARD_LOG
            dashboard = wiring.start_dashboard(
                str(config_path), config.database_url, options.port, options.host, log_path
            )
            # Streamlit takes seconds to stop: it starts to as soon as we do, not after the service.
            early_stop = asyncio.create_task(_terminate_when(stop, dashboard))
        await fill_history(options, config, str(config_path), incidents, far, epoch_s, stop, pool)
        if pool is not None:
            pool.close()  # idle processes have no business in the live phase
        if not options.live:
            return 0
        return await run_live(
            options, config, str(config_path), dashboard, stop, FarAgent(far, str(config_path), sim_port)
        )
    except Interrupted:
        say("interrupted; stopping")
        return 0
    finally:
        if dashboard is not None:
            early_stop.cancel()
            await asyncio.to_thread(stop_process, dashboard)
        await simulator.stop()


async def _terminate_when(stop: asyncio.Event, process) -> None:
    await stop.wait()
    if process.poll() is None:
        process.terminate()


def write_workdir(options: DemoOptions, simulator_url: str) -> Path:
    """The config and its long prompt; rewritten each start (the simulator's port changes)."""
    workdir = options.workdir.resolve()
    (workdir / LONG_PROMPT_FILE).parent.mkdir(parents=True, exist_ok=True)
    (workdir / LONG_PROMPT_FILE).write_text(long_prompt_text(), encoding="utf-8")
    real = real_providers_in(os.environ) if options.real_providers else []
    dashboard_url = options.dashboard_url if options.dashboard else None
    database_url = sqlite_url(options.db_path)
    text = config_text(
        simulator_url=simulator_url,
        database_url=database_url,
        interval=options.live_interval,
        dashboard_url=dashboard_url,
        real=real,
    )
    path = workdir / "firsttoken.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def migrate(database_url: str) -> None:
    from monitor.storage import make_engine, upgrade

    engine = make_engine(database_url)
    try:
        upgrade(engine)
    finally:
        engine.dispose()


async def fill_history(
    options: DemoOptions, config, config_path: str, incidents, far: Vantage, epoch_s: float, stop, pool
) -> None:
    """Backfill from the newest stored demo sample (or `backfill_s` ago) up to the epoch."""
    from monitor.storage import SampleWriter, make_engine, rollup_hours
    from monitor.storage.queries import recent_samples, sync_targets

    targets = [t for t in config.targets if t.provider in SIM_PROVIDERS]
    interval_s = options.history_interval_s
    engine = make_engine(config.database_url)
    try:
        start_s = epoch_s - options.backfill_s
        newest = await asyncio.to_thread(
            recent_samples, engine, since=datetime.fromtimestamp(start_s, UTC), limit=1, agent=DEMO_AGENT
        )
        if newest:
            start_s = newest[-1].started_at.timestamp() + 1.0
            say(f"continuing the history in {options.db_path} (newest sample {_ago(epoch_s - start_s)} ago)")
        await asyncio.to_thread(sync_targets, engine, config.targets, datetime.fromtimestamp(start_s, UTC))
        if epoch_s - start_s < interval_s:
            return
        job = Job(
            config_path=config_path,
            target_ids=tuple(t.id for t in targets),
            incidents=tuple(incidents),
            interval_s=interval_s,
            agent=DEMO_AGENT,
            seed=options.seed or 0,
            # A second vantage point, further away, with one congested hour of its own (monitor/demo/vantage.py).
            vantage=(far,),
            peak_s=demo_peak_s(epoch_s),  # the live simulator's daily cycle
        )
        say(f"backfilling {_ago(epoch_s - start_s)} of history: {len(targets)} targets every {interval_s / 60:g} min")
        say(
            f"a second vantage point, {far.agent}, probes {len(far.target_ids)} of them from further away "
            f"(+{FAR_PATH_MS:g} ms); its own link congests for an hour in the history and for "
            f"{LIVE_CONGESTION_S / 60:g} min from {LIVE_CONGESTION_AFTER_S / 60:g} min after the start: a ticket "
            "about its path each time, no page (Target page: one line per vantage point)"
        )
        label = "backfilling"
        bar = ProgressBar(label, 1)
        evaluator = wiring.BackfillAlerts(engine, config, bar.message, epoch_s)
        with tempfile.TemporaryDirectory(prefix="firsttoken-demo-spool-") as spool:
            clock = wiring.SettableNow(start_s)
            writer = SampleWriter(engine, spool, clock=clock.now)

            def submit(sample) -> None:
                clock.set(sample.started_at)
                writer.submit(sample)

            def progress(done: int, total: int) -> None:
                bar.total = total
                bar.update(done, f"alerts: {evaluator.fired} fired, {evaluator.resolved} resolved")

            t0 = time.monotonic()
            try:
                filling = asyncio.ensure_future(
                    backfill(
                        job,
                        start_s=start_s,
                        end_s=epoch_s,
                        submit=submit,
                        flush=writer.flush,
                        evaluate=evaluator.evaluate,
                        evaluate_every_s=config.alerting.evaluate_every_s,  # as the config it leaves says
                        progress=progress,
                        pool=pool,
                    )
                )
                result = await _unless_stopped(filling, stop)
                evaluator.finish(datetime.fromtimestamp(epoch_s, UTC))
            except Interrupted:
                bar.close()
                raise
            finally:
                await asyncio.to_thread(writer.close)
            bar.finish(f"alerts: {evaluator.fired} fired, {evaluator.resolved} resolved")
            first_hour = datetime.fromtimestamp(start_s, UTC)
            await asyncio.to_thread(
                rollup_hours, engine, first_hour, datetime.fromtimestamp(epoch_s, UTC) + timedelta(hours=1)
            )
        errors = ", ".join(f"{n} {kind}" for kind, n in sorted(result.errors.items())) or "none"
        say(f"history ready: {result.probes} probes in {time.monotonic() - t0:.1f}s (errors: {errors})")
    finally:
        engine.dispose()


async def run_live(options: DemoOptions, config, config_path: str, dashboard, stop, far: FarAgent) -> int:
    from monitor.agent.service import Service, ServiceOptions

    if stop.is_set():
        raise Interrupted
    spool = tempfile.mkdtemp(prefix="firsttoken-demo-spool-")
    service_options = ServiceOptions(
        config_path,
        "127.0.0.1",
        0,
        spool_dir=spool,
        shutdown_grace_s=2.0,
        own_signals=False,  # SIGINT/SIGTERM stay the demo's: demo-far stops first, then this agent
    )
    service = Service(service_options, config)
    task = asyncio.create_task(service.run(), name="firsttoken-service")
    watcher = asyncio.create_task(_stop_in_order(stop, far, service))
    relay = asyncio.create_task(_relay(service, stop))  # and the service's own stop is the demo's
    second = asyncio.create_task(_run_far(far, service, stop), name="demo-far")
    try:
        if dashboard is not None:
            up = await wiring.wait_for_dashboard(dashboard, options.host, options.port, DASHBOARD_BOOT_TIMEOUT_S, task)
            url = options.dashboard_url
            if up:
                print(f"firsttoken demo: dashboard on {url} (Ctrl-C stops everything)", flush=True)
                if options.browser:
                    wiring.open_browser(url)
            elif not task.done():
                log_path = Path(config_path).parent / DASHBOARD_LOG
                say(f"the dashboard did not come up on {url}; the service goes on without it. {log_path} ends:")
                print(wiring.log_tail(log_path), file=sys.stderr)
        else:
            print("firsttoken demo: probing live (Ctrl-C stops everything)", flush=True)
        return await task
    finally:
        watcher.cancel()
        relay.cancel()
        second.cancel()
        await far.stop()  # before the agent that leads, whatever ended the demo
        if not task.done():
            service.stop()
            await task
        shutil.rmtree(spool, ignore_errors=True)


async def _unless_stopped(work: asyncio.Future, stop: asyncio.Event):
    """`await work`, or cancel it and raise Interrupted as soon as `stop` is set."""
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({work, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
    if not work.done():
        work.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await work
        raise Interrupted
    return work.result()


async def _stop_in_order(stop: asyncio.Event, far: FarAgent, service) -> None:
    """Reverse order of start: demo-far, then the demo's agent (which gives the lease up as it goes)."""
    await stop.wait()
    await far.stop()
    service.stop()


async def _run_far(far: FarAgent, service, stop: asyncio.Event) -> None:
    """Start demo-far once the demo's agent leads; say so if it stops before the demo does."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + FAR_START_WAIT_S
    while not service.leader.is_leader and loop.time() < deadline and not stop.is_set():
        await asyncio.sleep(0.2)
    if stop.is_set():
        return
    await far.start()
    say(
        f"{far.vantage.agent} probes live too: a second `firsttoken run`, its path {FAR_PATH_MS:g} ms longer "
        f"(its log: {far.log_path})"
    )
    while not stop.is_set():
        code = far.exited()
        if code is not None:
            say(
                f"{far.vantage.agent} stopped (exit {code}); see {far.log_path}. The demo goes on from one vantage point"
            )
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 1.0)


async def _relay(service, stop: asyncio.Event) -> None:
    await service.stopping.wait()
    stop.set()


def _ago(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.3g} h"
    return f"{seconds / 60:.0f} min"
