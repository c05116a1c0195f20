"""`firsttoken run`: the long-running service."""

from __future__ import annotations

import argparse
import sys

from monitor.config import load_config
from monitor.errors import UsageError
from monitor.eventloop import run_async
from monitor.service import Service, ServiceOptions


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--listen", default="127.0.0.1:9464", help="HOST:PORT for /metrics and /healthz")
    p.add_argument(
        "--spool-dir", help="where samples wait while the database is down (default ./firsttoken-spool-AGENT)"
    )


def parse_listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(f"firsttoken run: --listen must be HOST:PORT, got {value!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def run(args: argparse.Namespace) -> int:
    from monitor.alerts.engine import alert_jobs
    from monitor.storage import check_schema, make_engine

    host, port = parse_listen(args.listen)
    config = load_config(args.config)
    engine = make_engine(config.database_url)
    try:
        problem = check_schema(engine)
    finally:
        engine.dispose()
    if problem:
        print(f"firsttoken run: {problem}", file=sys.stderr)
        return 1
    options = ServiceOptions(args.config, host, port, spool_dir=args.spool_dir)
    options.leader_jobs.update(alert_jobs())
    return run_async(Service(options, config).run())
