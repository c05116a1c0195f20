"""`firsttoken slo [--json] [--name NAME]`: where every SLO scope stands (DESIGN §12); `firsttoken slo
rules`: the same SLOs as Prometheus recording and alerting rules (`--openslo`: as OpenSLO v1 YAML).

Status reads the rollups (`monitor.storage.queries.slo`), never a month of raw samples. The table
shows per scope the attainment against the objective, the budget remaining, the burn rate over
each long window and when the budget runs out at the last 6 hours' pace (P/120); `--json` prints
one object per scope per line with `slo`, `scope`, `objective`, `period`, `probes`, `good`,
`attainment`, `budget_remaining`, `burn_rates`, `exhausts_at`.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from typing import TextIO

from monitor.errors import UsageError
from monitor.units import format_duration


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", nargs="?", choices=("status", "rules"), default="status", help="status (default) or rules")
    p.add_argument("--name", metavar="NAME", help="only this SLO")
    p.add_argument("--json", action="store_true", help="status: one JSON object per SLO scope per line")
    p.add_argument("--openslo", action="store_true", help="rules: OpenSLO v1 documents instead of Prometheus rules")


def run(args: argparse.Namespace) -> int:
    from monitor.config import load_config

    config = load_config(args.config)
    slos = [s for s in config.slos if args.name is None or s.name == args.name]
    if args.name is not None and not slos:
        known = ", ".join(s.name for s in config.slos) or "none"
        raise UsageError(f"firsttoken slo: no SLO {args.name!r} in {args.config} (slos: {known})")
    if args.action == "rules":
        return _rules(slos, args, sys.stdout)
    if not slos:
        print(f"firsttoken slo: {args.config} has no slos: section", file=sys.stderr)
        return 0
    return _status(config, slos, args, sys.stdout)


def _rules(slos, args, out: TextIO) -> int:
    import yaml

    if args.openslo:
        from monitor.slo.openslo import openslo_documents

        out.write(yaml.safe_dump_all(openslo_documents(slos), sort_keys=False))
        return 0
    from monitor.slo.prom_rules import slo_rules

    document = slo_rules(slos)
    out.write("# firsttoken slo rules: Prometheus rules over firsttoken's /metrics (firsttoken_slo_probes_total,\n")
    out.write("# every probe judged by the agent against each SLO); check with `promtool check rules FILE`.\n")
    out.write(yaml.safe_dump(document, sort_keys=False, width=10_000))
    return 0


def _status(config, slos, args, out: TextIO) -> int:
    from monitor.commands.db import SchemaNotReady, migrated_engine
    from monitor.maintenance.store import slo_coverage
    from monitor.storage.queries.slo_report import slo_reports

    now = datetime.now(UTC)
    try:
        with migrated_engine(args) as engine:
            maintenance = slo_coverage(engine, config.maintenance, config.targets, slos, now)  # DESIGN §16
            reports = slo_reports(engine, slos, config.targets, now, maintenance)
    except SchemaNotReady as exc:
        print(f"firsttoken: {exc}", file=sys.stderr)
        return 1
    if args.json:
        for report in reports:
            for status in report.scopes:
                out.write(json.dumps(status.to_dict(), separators=(",", ":")) + "\n")
        return 0
    write_table(reports, out)
    return 0


def _pct(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value * 100:.{digits}f}%"


def write_table(reports, out: TextIO) -> None:
    for report in reports:
        slo = report.slo
        out.write(
            f"SLO {slo.name}: {slo.objective * 100:g}% good over {format_duration(slo.period_s)}, one budget per {slo.per}\n"
        )
        if not report.scopes:
            out.write("  no configured target matches it\n\n")
            continue
        windows = list(report.scopes[0].burn_rates)
        header = ("SCOPE", "PROBES", "ATTAINMENT", "BUDGET LEFT", *(f"BURN {w}" for w in windows), "EXHAUSTS")
        rows = []
        for s in report.scopes:
            exhausts = (
                "spent" if s.exhausted else "-" if s.exhausts_at is None else s.exhausts_at.strftime("%Y-%m-%d %H:%M")
            )
            rates = ["-" if s.burn_rates[w] is None else f"{s.burn_rates[w]:.2f}x" for w in windows]
            rows.append(
                (
                    s.scope_key,
                    str(s.budget.probes),
                    _pct(s.budget.attainment),
                    _pct(s.budget.remaining, 1),
                    *rates,
                    exhausts,
                )
            )
        widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
        for r in (header, *rows):
            out.write("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() + "\n")
        out.write("\n")
