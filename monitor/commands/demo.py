"""`firsttoken demo`: simulated providers, a backfilled day, the live service and the dashboard."""

from __future__ import annotations

import argparse
import logging
import os
import socket
from pathlib import Path

from monitor import envvars
from monitor.commands.dashboard import add_no_sign_in
from monitor.errors import UsageError
from monitor.units import parse_duration

MAX_BACKFILL_S = 30 * 86400.0
# The demo owns its database: a URL or agent from the environment would send
# its simulated history somewhere else.
IGNORED_ENV = (envvars.DATABASE_URL, envvars.AGENT)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--backfill", default="24h", metavar="DURATION", help="history to simulate first (default 24h; 0 for none)"
    )
    p.add_argument(
        "--backfill-interval", metavar="DURATION", help="spacing of the history's probes (default: 1 to 5 min)"
    )
    p.add_argument(
        "--db", default="firsttoken-demo.db", metavar="PATH", help="SQLite file (default ./firsttoken-demo.db)"
    )
    p.add_argument(
        "--workdir",
        default="firsttoken-demo",
        metavar="DIR",
        help="where the demo config is written (default ./firsttoken-demo)",
    )
    p.add_argument("--port", type=int, default=8501, help="dashboard port (default 8501)")
    p.add_argument("--host", default="127.0.0.1", help="dashboard address to listen on (default 127.0.0.1)")
    add_no_sign_in(p)
    p.add_argument("--interval", default="30s", metavar="DURATION", help="live probe interval (default 30s)")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser")
    p.add_argument("--no-dashboard", action="store_true", help="run without the dashboard")
    p.add_argument(
        "--with-real-providers",
        action="store_true",
        help="also probe OpenAI, Anthropic and Gemini for each key in the environment "
        "(OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY or GOOGLE_API_KEY)",
    )
    p.add_argument(
        "--backfill-only", action="store_true", help="write the history, then exit (no live probing, no dashboard)"
    )
    p.add_argument(
        "--workers", type=int, metavar="N", help="processes for the backfill (default: one per core, up to 4)"
    )
    p.add_argument("--seed", type=int, help="seed for the simulated jitter, spikes and errors")


def _duration(value: str, flag: str, *, max_s: float = MAX_BACKFILL_S) -> float:
    try:
        seconds = parse_duration(value)
    except ValueError as exc:
        raise UsageError(f"firsttoken demo: {flag}: {exc}") from None
    if seconds > max_s:
        raise UsageError(f"firsttoken demo: {flag}: at most {max_s / 86400:g} days")
    return seconds


def options_from(args: argparse.Namespace):
    from monitor.demo.runner import DemoOptions

    backfill_s = _duration(args.backfill, "--backfill")
    interval_s = _duration(args.backfill_interval, "--backfill-interval") if args.backfill_interval else None
    if interval_s is not None and interval_s < 10:
        raise UsageError("firsttoken demo: --backfill-interval: at least 10s")
    if _duration(args.interval, "--interval") < 1:
        raise UsageError("firsttoken demo: --interval: at least 1s")
    if not 1 <= args.port <= 65535:
        raise UsageError(f"firsttoken demo: --port: {args.port} is not a port")
    options = DemoOptions(
        backfill_s=backfill_s,
        backfill_interval_s=interval_s,
        db_path=Path(args.db),
        workdir=Path(args.workdir),
        port=args.port,
        host=args.host,
        live_interval=args.interval,
        dashboard=not (args.no_dashboard or args.backfill_only),
        live=not args.backfill_only,
        browser=not args.no_browser,
        real_providers=args.with_real_providers,
        seed=args.seed,
    )
    if args.workers is not None:
        options.workers = max(0, args.workers)
    return options


def port_free(host: str, port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def run(args: argparse.Namespace) -> int:
    # Imported before the worker pool forks, so the workers start with the probe stack loaded.
    from dashboard.settings import sign_in_problem
    from monitor.demo.backfill import WorkerPool
    from monitor.demo.runner import run_demo, say
    from monitor.eventloop import run_async

    options = options_from(args)
    if options.dashboard and (problem := sign_in_problem(options.host, getattr(args, "no_sign_in", False))):
        say(problem)
        return 2
    if options.dashboard and not port_free(options.host, options.port):
        say(f"port {options.port} is in use (another dashboard?): pass --port N, or --no-dashboard")
        return 1
    if not args.debug:
        # The demo's console is for people: progress, alerts and the dashboard's
        # address. The service's routine INFO lines (every alert round) drown them.
        logging.getLogger("monitor").setLevel(logging.WARNING)
    for name in IGNORED_ENV:
        if os.environ.pop(name, None) is not None:
            say(f"ignoring {name}: the demo uses its own database {options.db_path}")
    # Before the event loop and any thread exist: see WorkerPool.
    pool = WorkerPool(options.workers) if options.workers > 0 and options.backfill_s > 0 else None
    try:
        return run_async(run_demo(options, pool))
    finally:
        if pool is not None:
            pool.close()
