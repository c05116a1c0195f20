"""`firsttoken backtest --csv FILE [--metric M] [--rule NAME] [--json]`: replay a series through the detector.

`--samples FILE` replays the whole alert engine over stored samples instead (backtest_samples.py).

With an `agent` column the rows replay per vantage point with the rule's quorum (DESIGN §11): the
table then says each alarm's scope (`target`, or `vantage` for one agent's), where it was seen
and where not, and for a latency rule whether the network path or the provider moved.

Which rules: `--rule NAME` takes that rule from the config file's `alerts:`
(its metric wins). Without it, every config rule on `--metric` (default
ttft_ms) runs; with no config file, or none on that metric, the built-in
default for the metric does (a 50% regression; for error_rate, above 20%
over 15 minutes). Output: a table of alarms, or with `--json` one object
per alarm per line (`index` is the 0-based data row; `resolved_index` is
null while the alert still fires at the end). Exit 0 whatever was found; 2
for a bad CSV row (one line naming it), an unknown rule or a bad config.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from monitor.commands import DEFAULT_CONFIG
from monitor.errors import UsageError
from monitor.sample import RULE_METRICS


def add_arguments(p: argparse.ArgumentParser) -> None:
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--samples", metavar="FILE", help="replay every rule and SLO over `firsttoken samples --csv` output"
    )
    source.add_argument("--csv", metavar="FILE", help="timestamp,value rows (empty or negative = failed)")
    p.add_argument("--step", metavar="DURATION", help="with --samples: the round (default alerting.evaluate_every)")
    p.add_argument("--metric", choices=RULE_METRICS, help="the series' metric (default ttft_ms, or the rule's)")
    p.add_argument("--rule", metavar="NAME", help="replay this rule from the config's alerts:")
    p.add_argument("--json", action="store_true", help="one JSON object per alarm per line")
    p.add_argument(
        "--slo", metavar="NAME", help="replay timestamp,ok,ttft_ms[,agent] rows through this SLO's burn rates"
    )


def run(args: argparse.Namespace) -> int:
    from monitor.alerts.backtest import BacktestError, read_csv, replay, short_runs

    if getattr(args, "samples", None):
        from monitor.commands.backtest_samples import run_samples

        return run_samples(args)
    if getattr(args, "slo", None):
        from monitor.commands.backtest_slo import run_slo

        return run_slo(args)

    config_rules: list = []
    rules = select_rules(
        getattr(args, "config", DEFAULT_CONFIG),
        getattr(args, "rule", None),
        getattr(args, "metric", None),
        config_rules,
    )
    metric = rules[0][1].metric
    try:
        points = read_csv(args.csv, metric)
    except BacktestError as exc:
        raise UsageError(f"firsttoken backtest: {exc}") from None
    if len({p.agent for p in points}) > 1:  # several vantage points: the engine itself, quorum and all
        from monitor.alerts.replay_series import replay_agents

        alarms = replay_agents(points, config_rules or [_builtin(metric)], metric, {BUILTIN: rules[0][0]})
        short = []
    else:
        alarms = replay(points, rules)
        short = short_runs(points, rules)
    if getattr(args, "json", False):
        for alarm in alarms:
            sys.stdout.write(json.dumps(alarm.to_dict(), separators=(",", ":")) + "\n")
    else:
        write_table(alarms, len(points), sum(p.value is None for p in points), [name for name, _ in rules], sys.stdout)
        write_short_runs(short, sys.stdout)
    return 0


BUILTIN = "built-in"


def _builtin(metric: str):
    """The built-in default as a config rule, for the engine (`default_settings` says what it is)."""
    from monitor.config import load_config_text

    rule = {"name": BUILTIN, "metric": metric, "kind": "regression", "min_change": "50%"}
    if metric == "error_rate":
        rule = {"name": BUILTIN, "metric": metric, "kind": "threshold", "above": "20%", "window": "15m"}
    return load_config_text(json.dumps({"alerts": [rule]})).alerts[0]


def select_rules(config_path: str, rule_name: str | None, metric: str | None, chosen: list | None = None):
    """[(rule name, DetectorSettings)] for this run (UsageError / ConfigurationError for exit 2).
    `chosen` is filled with the config's rules themselves (an `agent` column replays them in the engine)."""
    from monitor.alerts.detectors.detect import default_settings, settings_from_rule

    config_rules = ()
    if os.path.exists(config_path):
        from monitor.config import load_config

        config_rules = load_config(config_path).alerts
    elif rule_name is not None or config_path != DEFAULT_CONFIG:
        raise UsageError(f"firsttoken backtest: no config file {config_path!r} to take rules from")
    if rule_name is not None:
        rule = next((r for r in config_rules if r.name == rule_name), None)
        if rule is None:
            known = ", ".join(r.name for r in config_rules) or "none"
            raise UsageError(f"firsttoken backtest: no alert rule {rule_name!r} in {config_path} (rules: {known})")
        if metric is not None and metric != rule.metric:
            raise UsageError(f"firsttoken backtest: rule {rule_name!r} is on {rule.metric}, not {metric}")
        if chosen is not None:
            chosen.append(rule)
        return [(rule.name, settings_from_rule(rule))]
    metric = metric or "ttft_ms"
    matching = [r for r in config_rules if r.metric == metric]
    if chosen is not None:
        chosen.extend(matching)
    found = [(r.name, settings_from_rule(r)) for r in matching]
    return found or [(f"built-in {metric} {default_settings(metric).kind}", default_settings(metric))]


def write_table(alarms: Sequence, rows: int, failed: int, rule_names: Sequence[str], out: TextIO) -> None:
    out.write(f"{rows} rows ({failed} failed probes), rules: {', '.join(rule_names)}\n")
    if not alarms:
        out.write("no alarms\n")
        return
    vantage = any(a.agents for a in alarms)  # the file had an agent column: say where each alarm was seen
    header = ("row", "timestamp", "rule", "value", "baseline", "change", "resolved")
    if vantage:
        header += ("scope", "seen from", "normal from", "mostly")
    lines = [header]
    for a in alarms:
        change = f"{a.value / a.baseline:.2f}x" if a.value is not None and a.baseline else ""
        if a.resolved_index is None:
            resolved = "still firing"
        else:
            resolved = f"row {a.resolved_index}{' (new normal)' if a.new_normal else ''}"
        line = (str(a.index), a.timestamp, a.rule, _num(a.value), _num(a.baseline), change, resolved)
        if vantage:
            mostly = a.attribution["dominant"] if a.attribution else "-"
            line += (a.scope, ",".join(a.agents) or "-", ",".join(a.agents_clear) or "-", mostly)
        lines.append(line)
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for line in lines:
        out.write("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip() + "\n")
    out.write(f"{len(alarms)} alarm{'s' if len(alarms) != 1 else ''}\n")


def write_short_runs(runs: Sequence, out: TextIO) -> None:
    """Shifts that had the evidence but not the duration (`min_duration`): never a page."""
    if runs:
        out.write(f"{len(runs)} shorter than min_duration, not paged:\n")
        for r in runs:
            out.write(f"  row {r.index}  {r.timestamp}  {r.rule}  held {r.held_s / 60:.0f} min\n")


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if abs(value) < 1 else f"{value:.1f}"
