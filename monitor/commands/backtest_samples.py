"""`firsttoken backtest --samples FILE [--rule NAME | --slo NAME] [--step 30s] [--json]`: the alert
engine replayed over the CSV `firsttoken samples --csv` writes (DESIGN §15, monitor.alerts.replay).

Prints each alert change — time, change (fired, resolved, inhibited, muted, escalated), rule or SLO,
scope, agent, severity, summary — then a count. With `--json`: one object per change per line.
Every rule and SLO of the config replays unless `--rule` or `--slo` names one. Exit 0 whatever was
found; 2 for a bad CSV row (one line naming it), an unknown rule or SLO, or a bad config.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TextIO

from monitor.commands import DEFAULT_CONFIG
from monitor.errors import UsageError
from monitor.units import DURATION_HINT, parse_duration

COLUMNS = ("time", "change", "rule", "scope", "agent", "severity", "summary")


def run_samples(args: argparse.Namespace) -> int:
    from monitor.alerts.replay import replay, select
    from monitor.config import load_config
    from monitor.storage.samples_csv import SamplesCsvError, read_samples_file

    if getattr(args, "metric", None):
        raise UsageError("firsttoken backtest: --samples replays the config's rules; leave out --metric")
    rule, slo = getattr(args, "rule", None), getattr(args, "slo", None)
    if rule and slo:
        raise UsageError("firsttoken backtest: give --rule or --slo, not both")
    config = load_config(getattr(args, "config", DEFAULT_CONFIG), secrets="defer")
    if rule is not None and rule not in {r.name for r in config.alerts}:
        known = ", ".join(r.name for r in config.alerts) or "none"
        raise UsageError(f"firsttoken backtest: no alert rule {rule!r} in the config (rules: {known})")
    if slo is not None and slo not in {s.name for s in config.slos}:
        known = ", ".join(s.name for s in config.slos) or "none"
        raise UsageError(f"firsttoken backtest: no SLO {slo!r} in the config (slos: {known})")
    step_s = None
    if getattr(args, "step", None):
        try:
            step_s = parse_duration(args.step)
        except ValueError:
            raise UsageError(f"firsttoken backtest: --step: {DURATION_HINT}") from None
    try:
        samples = read_samples_file(args.samples)
    except SamplesCsvError as exc:
        raise UsageError(f"firsttoken backtest: {exc}") from None
    changes = list(replay(samples, select(config, rule=rule, slo=slo), step_s=step_s))
    if getattr(args, "json", False):
        for change in changes:
            sys.stdout.write(json.dumps(change.to_dict(), separators=(",", ":")) + "\n")
    else:
        write_table(changes, len(samples), sys.stdout)
    return 0


def write_table(changes: Sequence, samples: int, out: TextIO) -> None:
    fired = sum(1 for c in changes if c.change == "fired")
    out.write(f"{samples} samples replayed\n")
    if not changes:
        out.write("no alert changes\n")
        return
    lines = [COLUMNS[:-1]]
    for c in changes:
        d = c.to_dict()
        lines.append((d["time"], c.change, (c.slo and f"slo:{c.slo}") or c.rule, c.scope, c.agent or "-", c.severity))
    widths = [max(len(line[i]) for line in lines) for i in range(len(COLUMNS) - 1)]
    for line, change in zip(lines, (None, *changes), strict=True):
        cells = "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True))
        out.write(f"{cells}  {change.summary if change else 'summary'}\n")
    out.write(f"{len(changes)} alert change{'s' if len(changes) != 1 else ''} ({fired} fired)\n")
