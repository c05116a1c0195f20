"""`firsttoken` command line (DESIGN §4): argument parsing and dispatch only.

Each command lives in `monitor/commands/<name>.py` as `run(args) -> int` and
is imported only when used, so `firsttoken probe` does not pay for Streamlit.
Exit codes: 0 ok, 1 runtime failure, 2 bad configuration or usage. Errors are
one line without a traceback unless `--debug`.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from monitor.errors import ConfigurationError, UsageError

EXIT_OK, EXIT_FAILURE, EXIT_CONFIG = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's default prints usage, then exits 2
        raise UsageError(f"{self.prog}: {message}")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", default="firsttoken.yaml", help="config file (default ./firsttoken.yaml)")
    p.add_argument("--debug", action="store_true", help="verbose logs and full tracebacks")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="firsttoken", description="Continuous synthetic monitor for LLM APIs.")
    _common(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("probe", help="probe targets now and print the results")
    _common(p)
    p.add_argument("--target", default="*", help="glob over target ids, e.g. 'openai/*@global:short'")
    p.add_argument("--repeat", type=int, default=1, help="probes per target")
    p.add_argument("--concurrency", type=int, default=1, help="probes in flight at once")
    p.add_argument("--json", action="store_true", help="one JSON object per probe per line")
    p.add_argument("--store", action="store_true", help="also write the samples to the database")

    p = sub.add_parser("run", help="the service: scheduler, writer, alerting, /metrics and /healthz")
    _common(p)
    p.add_argument("--listen", default="127.0.0.1:9464", help="HOST:PORT for /metrics and /healthz")
    p.add_argument(
        "--spool-dir", help="where samples wait while the database is down (default ./firsttoken-spool-AGENT)"
    )

    p = sub.add_parser("samples", help="print stored samples")
    _common(p)
    p.add_argument("--target", default="*", help="glob over target ids")
    p.add_argument("--since", default="1h", help="how far back, e.g. 15m, 1h, 7d (default 1h)")
    p.add_argument("--limit", type=int, help="at most this many samples (the newest)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="one JSON object per sample per line")
    fmt.add_argument("--csv", action="store_true", help="CSV with a header row")

    p = sub.add_parser("db", help="database schema: upgrade (migrate to the newest) or current")
    _common(p)
    p.add_argument("db_command", choices=("upgrade", "current"), metavar="{upgrade,current}")

    p = sub.add_parser("check-config", help="validate the config and print the expanded matrix")
    _common(p)

    p = sub.add_parser("simulate", help="run only the simulated providers")
    _common(p)
    from monitor.simulator.run import add_arguments as simulator_arguments

    simulator_arguments(p)
    return parser


# command name -> module under monitor.commands implementing run(args) -> int
COMMANDS = {
    "probe": "probe",
    "run": "run",
    "samples": "samples",
    "db": "db",
    "check-config": "check_config",
    "simulate": "simulate",
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        args = parser.parse_args(argv)
        if not args.command:
            parser.print_help()
            return EXIT_CONFIG
        logging.basicConfig(
            level=logging.DEBUG if args.debug else logging.INFO,
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
            stream=sys.stderr,
        )
        # httpx logs every request at INFO: noise, and URLs may carry keys.
        for noisy in ("httpx", "alembic", "apscheduler"):
            logging.getLogger(noisy).setLevel(logging.DEBUG if args.debug else logging.WARNING)
        module = importlib.import_module(f"monitor.commands.{COMMANDS[args.command]}")
        return module.run(args)
    except ConfigurationError as exc:
        for line in exc.lines():
            print(line, file=sys.stderr)
        return EXIT_CONFIG
    except UsageError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        return EXIT_FAILURE
    except Exception as exc:
        if debug:
            raise
        print(f"firsttoken: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_FAILURE
