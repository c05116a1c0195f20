"""`firsttoken backtest --slo NAME --csv FILE [--json]`: replay probes through an SLO's burn-rate alert
(DESIGN §12), to tune an SLO on a team's own history before it pages anyone.

Prints each firing, escalation and resolution with its window pair, burn rate and severity, then
the series' attainment and budget remaining. With `--json`: one object per event per line, then one
`{"summary": …}` line. Exit 0 whatever was found; 2 for a bad CSV row, an unknown SLO or a bad config.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TextIO

from monitor.commands import DEFAULT_CONFIG
from monitor.errors import UsageError


def run_slo(args: argparse.Namespace) -> int:
    from monitor.alerts.backtest import BacktestError
    from monitor.alerts.slo_backtest import missing_columns, read_csv, replay

    if getattr(args, "rule", None) or getattr(args, "metric", None):
        raise UsageError("firsttoken backtest: --slo replays an SLO; leave out --rule and --metric")
    slo = select_slo(getattr(args, "config", DEFAULT_CONFIG), args.slo)
    try:
        header, probes = read_csv(args.csv)
    except BacktestError as exc:
        raise UsageError(f"firsttoken backtest: {exc}") from None
    missing = missing_columns(slo, header)
    if missing:
        raise UsageError(
            f"firsttoken backtest: {args.csv}:1: SLO {slo.name!r} bounds {', '.join(missing)}: no such column"
        )
    result = replay(slo, probes)
    summary = {
        "slo": slo.name,
        "probes": result.budget.probes,
        "good": result.budget.good,
        "objective": slo.objective,
        "attainment": _round(result.budget.attainment),
        "budget_remaining": _round(result.budget.remaining),
        # The probes the SLO's whole period holds: the series' own, or, for a series shorter than the
        # period, its pace over the whole period (the budget is the period's; monitor.slo.budget).
        "period_probes": round(result.budget.period_probes),
        "firing_at_end": result.firing_at_end,
    }
    if getattr(args, "json", False):
        for event in result.events:
            sys.stdout.write(json.dumps(event.to_dict(), separators=(",", ":")) + "\n")
        sys.stdout.write(json.dumps({"summary": summary}, separators=(",", ":")) + "\n")
    else:
        write_table(result, summary, sys.stdout)
    return 0


def select_slo(config_path: str, name: str):
    if not os.path.exists(config_path):
        raise UsageError(f"firsttoken backtest: no config file {config_path!r} to take SLO {name!r} from")
    from monitor.config import load_config

    slos = load_config(config_path).slos
    slo = next((s for s in slos if s.name == name), None)
    if slo is None:
        known = ", ".join(s.name for s in slos) or "none"
        raise UsageError(f"firsttoken backtest: no SLO {name!r} in {config_path} (slos: {known})")
    return slo


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def write_table(result, summary: dict, out: TextIO) -> None:
    header = ("row", "timestamp", "event", "severity", "window", "burn rate", "short")
    lines = [header]
    for e in result.events:
        rate = "-" if e.burn_rate is None else f"{e.burn_rate:.2f}x"
        short = "-" if e.short_burn_rate is None else f"{e.short_burn_rate:.2f}x"
        lines.append((str(e.index), e.timestamp, e.event, e.severity or "-", e.window or "-", rate, short))
    if len(lines) == 1:
        out.write("no burn-rate alerts\n")
    else:
        widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
        for line in lines:
            out.write("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip() + "\n")
    attainment = summary["attainment"]
    remaining = summary["budget_remaining"]
    # A series shorter than the period: say the budget is the period's, taken at the series' pace.
    paced = f" (of a period of {summary['period_probes']:,} probes at this pace)"
    out.write(
        f"{summary['probes']} probes, {summary['good']} good: attainment "
        f"{'-' if attainment is None else f'{attainment * 100:.3f}%'} against {summary['objective'] * 100:g}%, "
        f"budget remaining {'-' if remaining is None else f'{remaining * 100:.1f}%'}"
        f"{paced if summary['period_probes'] > summary['probes'] else ''}"
        f"{'; still firing (' + summary['firing_at_end'] + ')' if summary['firing_at_end'] else ''}\n"
    )
