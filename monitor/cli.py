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

from monitor.childproc import honour_parent
from monitor.commands import DEFAULT_CONFIG
from monitor.errors import ConfigurationError, UsageError

EXIT_OK, EXIT_FAILURE, EXIT_CONFIG = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's default prints usage, then exits 2
        raise UsageError(f"{self.prog}: {message}")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", default=DEFAULT_CONFIG, help=f"config file (default ./{DEFAULT_CONFIG})")
    p.add_argument("--debug", action="store_true", help="verbose logs and full tracebacks")


# command -> (module under monitor.commands, one-line help). Each module has
# `add_arguments(parser)` and `run(args) -> int`, and keeps heavy imports
# inside `run`, so building this parser stays cheap.
COMMANDS = {
    "demo": ("demo", "the embedded demo: simulated providers, SQLite, scheduler and dashboard"),
    "run": ("run", "the service: scheduler, writer, alerting, /metrics and /healthz"),
    "probe": ("probe", "probe targets now and print the results"),
    "samples": ("samples", "print stored samples"),
    "routes": ("routes", "rank the routes of each model: which provider and region to use now"),
    "mcp": ("mcp", "the read-only MCP server over stdio: best routes, provider status, alerts for agents"),
    "backtest": ("backtest", "replay a series through the alert detector"),
    "report": ("report", "SLA evidence per provider contract (`report sla`) and the weekly report (`report weekly`)"),
    "slo": ("slo", "SLO attainment, error budgets and burn rates; `slo rules` for Prometheus"),
    "silence": ("silence", "add, list or expire silences"),
    "notify": ("notify", "send a sample alert through the configured notifiers: `notify test [--notifier NAME]`"),
    "status": ("status", "the public status site: `status export DIR` writes it as static files"),
    "maintenance": ("maintenance", "add, list, end or export maintenance windows (pages muted, probes marked)"),
    "incident": ("incident", "list, show, publish, update or resolve the status site's incidents"),
    "check-config": ("check_config", "validate the config and print the expanded matrix"),
    "schema": ("schema", "print the JSON Schema of firsttoken.yaml (for editors)"),
    "db": ("db", "database schema: upgrade (migrate to the newest) or current"),
    "dashboard": ("dashboard", "start the Streamlit dashboard on the configured database"),
    "simulate": ("simulate", "run only the simulated providers"),
}


def needs_secrets(args: argparse.Namespace) -> bool:
    """Only commands that call providers or notifiers resolve their credentials (least privilege):
    every other command loads the config with those `${VAR}`s unset (monitor.config.DEFER). A new
    command that sends requests with the config's keys must be named here. `probe` and `notify test`
    defer them too, then require only the credentials of the providers or notifiers they call."""
    real_demo = args.command == "demo" and getattr(args, "with_real_providers", False)
    sends_report = args.command == "report" and getattr(args, "send", False)
    return args.command == "run" or real_demo or sends_report


def _command_module(name: str):
    return importlib.import_module(f"monitor.commands.{COMMANDS[name][0]}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="firsttoken", description="Continuous synthetic monitor for LLM APIs.")
    _common(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (_module, help_text) in COMMANDS.items():
        try:
            module = _command_module(name)
        except ModuleNotFoundError as exc:  # a command not in this build; other import errors surface
            if exc.name != f"monitor.commands.{COMMANDS[name][0]}":
                raise
            continue
        p = sub.add_parser(name, help=help_text, description=help_text)
        _common(p)
        module.add_arguments(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    honour_parent()  # started by a supervisor of ours (a test, the demo): end with it (monitor.childproc)
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
        for noisy in ("httpx", "alembic", "apscheduler", "weasyprint", "fontTools"):
            logging.getLogger(noisy).setLevel(logging.DEBUG if args.debug else logging.WARNING)
        from monitor.config import DEFER, RESOLVE, secrets_policy

        with secrets_policy(RESOLVE if needs_secrets(args) else DEFER):
            return _command_module(args.command).run(args)
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
        # One line: SQLAlchemy and psycopg messages go on with hints and links.
        lines = str(exc).strip().splitlines()
        print(f"firsttoken: {type(exc).__name__}: {lines[0] if lines else ''}", file=sys.stderr)
        return EXIT_FAILURE
