"""`firsttoken run`: the long-running service."""

from __future__ import annotations

import argparse
import sys

from monitor.agent.workers import ONE_PROCESS_UP_TO_PROBES_PER_S, PROBES_PER_S_PER_LOOP
from monitor.errors import UsageError
from monitor.units import parse_size


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--listen",
        default="127.0.0.1:9464",
        help="HOST:PORT for /metrics, /healthz, /status and /mcp (beyond loopback /mcp needs FIRSTTOKEN_MCP_TOKEN)",
    )
    p.add_argument(
        "--spool-dir", help="where samples wait while the database is down (default ./firsttoken-spool-AGENT)"
    )
    p.add_argument(
        "--probe-workers",
        type=int,
        help=(
            "processes that probe (one event loop each); default: past "
            f"{ONE_PROCESS_UP_TO_PROBES_PER_S:g} probes/s, one per {PROBES_PER_S_PER_LOOP:g} probes/s "
            "(at least two), up to the CPUs; 1: this one"
        ),
    )
    p.add_argument(
        "--spool-max-bytes",
        default="1G",
        help="disk the spool may use, e.g. 512M; past it the oldest samples are dropped and counted (default 1G)",
    )


def idle_agent_warning(config) -> str | None:
    """An agent whose name no check admits probes nothing: say so (a FIRSTTOKEN_AGENT left unset or
    misspelt is the usual cause). It still runs, as a leader for rollups and alerts may."""
    if not config.targets or config.targets_for_agent(config.agent):
        return None
    named = sorted({a for t in config.targets for a in t.agents})
    return (
        f"agent {config.agent!r} probes no target: every check names its agents ({', '.join(named)}); "
        "set FIRSTTOKEN_AGENT to one of them"
    )


def parse_listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(f"firsttoken run: --listen must be HOST:PORT, got {value!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def parse_spool_size(value: str) -> int:
    try:
        return parse_size(value)
    except ValueError as exc:
        raise UsageError(f"firsttoken run: --spool-max-bytes: {exc}, got {value!r}") from None


def run(args: argparse.Namespace) -> int:
    # Imported here, not at the top: every command's parser is built on each `firsttoken` call.
    from monitor.agent.service import Service, ServiceOptions
    from monitor.config import load_config
    from monitor.eventloop import run_async
    from monitor.storage import check_schema, make_engine

    host, port = parse_listen(args.listen)
    spool_max_bytes = parse_spool_size(args.spool_max_bytes)
    config = load_config(args.config)
    from monitor.probe.cost import over_budget

    if over := over_budget(config):
        verdict, refuse = over
        if refuse:
            print(f"firsttoken run: {verdict}; not starting (budget.action refuse)", file=sys.stderr)
            return 2
        print(f"firsttoken run: warning: {verdict}", file=sys.stderr)
    if idle := idle_agent_warning(config):
        print(f"firsttoken run: warning: {idle}", file=sys.stderr)
    engine = make_engine(config.database_url)
    try:
        problem = check_schema(engine)
    finally:
        engine.dispose()
    if problem:
        print(f"firsttoken run: {problem}", file=sys.stderr)
        return 1
    options = ServiceOptions(
        args.config,
        host,
        port,
        spool_dir=args.spool_dir,
        spool_max_bytes=spool_max_bytes,
        probe_workers=args.probe_workers,
        dedicated_process=True,
    )
    # The service runs the leader's jobs (monitor.leader.jobs) with this config's `alerting:` timings.
    return run_async(Service(options, config).run())
