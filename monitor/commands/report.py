"""`firsttoken report sla|weekly` (DESIGN §17): a provider's SLA evidence, and the weekly report.

    firsttoken report sla --month 2026-11 [--provider P] [--format html|pdf|json|csv] [-o FILE]
    firsttoken report sla --from 2026-11-01 --to 2026-11-15
    firsttoken report weekly [--week 2026-W48] [--format html|pdf] [-o FILE] [--send]

Without `-o` a text format (html, json, csv) goes to standard output; a PDF needs `-o`.
"""

from __future__ import annotations

import argparse
import importlib

FORMATS = {"sla": ("html", "pdf", "json", "csv"), "weekly": ("html", "pdf")}


def add_arguments(p: argparse.ArgumentParser) -> None:
    kinds = p.add_subparsers(dest="report", metavar="REPORT", required=True, parser_class=type(p))
    sla = kinds.add_parser("sla", help="per contract: uptime, latency SLI, credit, every minute that broke it")
    sla.add_argument("--month", metavar="YYYY-MM", help="the calendar month, UTC")
    sla.add_argument("--from", dest="start", metavar="DATE", help="with --to: the first day (UTC), or an ISO time")
    sla.add_argument("--to", dest="end", metavar="DATE", help="with --from: the day after the last (exclusive)")
    sla.add_argument("--provider", action="append", metavar="P", help="only these providers (repeatable)")
    sla.add_argument("--format", choices=FORMATS["sla"], default="html")
    sla.add_argument("-o", "--output", metavar="FILE", help="write here (default: standard output)")
    weekly = kinds.add_parser("weekly", help="per provider: uptime, TTFT, TPS against the week before, incidents")
    weekly.add_argument("--week", metavar="YYYY-Www", help="the ISO week (default: the last whole week)")
    weekly.add_argument(
        "--report",
        dest="entry",
        metavar="NAME",
        help="the `reports:` entry whose providers, time zone and recipients to use (default: every provider, UTC)",
    )
    weekly.add_argument("--format", choices=FORMATS["weekly"], default="html")
    weekly.add_argument("-o", "--output", metavar="FILE", help="write here (default: standard output)")
    weekly.add_argument("--send", action="store_true", help="mail it to the entry's recipients through smtp:")
    for sub in (sla, weekly):
        sub.add_argument("--config", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    return importlib.import_module(f"monitor.commands.report_{args.report}").run(args)
