"""`firsttoken report sla` (DESIGN §17): per contract, the measured uptime and latency SLI, the credit
reached, every minute that broke it and the minutes left out, as HTML, PDF, JSON or CSV."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from monitor.errors import UsageError


def period_of(args: argparse.Namespace):
    from monitor.reports.sla import between, month

    if args.month and (args.start or args.end):
        raise UsageError("firsttoken report sla: give --month or --from/--to, not both")
    try:
        if args.month:
            return month(args.month)
        if args.start and args.end:
            return between(args.start, args.end)
    except ValueError as exc:
        raise UsageError(f"firsttoken report sla: {exc}") from None
    raise UsageError("firsttoken report sla: give --month YYYY-MM, or --from DATE and --to DATE")


def write_output(data: str | bytes, output: str | None, fmt: str, command: str) -> None:
    """To `output`, or to standard output for a text format (a PDF needs a file)."""
    if output is None:
        if isinstance(data, bytes):
            raise UsageError(f"firsttoken {command}: --format {fmt} needs -o FILE")
        sys.stdout.write(data)
        return
    path = Path(output)
    try:
        path.write_bytes(data) if isinstance(data, bytes) else path.write_text(data, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"firsttoken {command}: cannot write {output}: {exc.strerror or exc}") from None
    print(f"wrote {output} ({len(data):,} bytes)", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from monitor.commands.db import SchemaNotReady, migrated_engine
    from monitor.config import load_config
    from monitor.reports.sla import RENDERERS, build_sla_report

    period = period_of(args)
    config = load_config(args.config)
    unknown = [p for p in args.provider or () if p not in config.providers]
    if unknown:
        raise UsageError(f"firsttoken report sla: --provider {unknown[0]}: no such provider in {args.config}")
    try:
        with migrated_engine(args, read_only=True) as engine:
            report = build_sla_report(engine, config, period, providers=args.provider)
    except SchemaNotReady as exc:
        print(f"firsttoken: {exc}", file=sys.stderr)
        return 1
    if not report.contracts:
        print(
            "firsttoken report sla: no provider asked for has a contract: in the config (DESIGN §17); nothing to measure",
            file=sys.stderr,
        )
    write_output(RENDERERS[args.format](report), args.output, args.format, "report sla")
    return 0
