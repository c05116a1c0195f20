"""`firsttoken check-config`: validate the config and print the expanded matrix.

Exit 0 with a table of targets and a summary; exit 2 with every error, one
line each prefixed by the file name. Nothing printed can carry a secret: all
output goes through `redact` with the config's secrets, and the database
URL's password is masked even when it is too short for `redact` to match.

Credentials need not be set: check-config runs in CI, where the providers'
keys are not. An unset one is a line at the end of the report naming the
variable and the commands that need it, and the exit code stays 0 (stderr
stays empty: it is for errors); every other problem, an unset variable
outside a credential included, is an error (2).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, TextIO
from urllib.parse import urlsplit, urlunsplit

from monitor.redact import MASK, redact
from monitor.units import format_duration

if TYPE_CHECKING:
    from monitor.config import Config

HEADERS = ("TARGET", "PROTOCOL", "BASE URL", "INTERVAL", "TIMEOUT", "TTFT_TIMEOUT", "AGENTS")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """check-config takes only the common --config."""


def run(args: argparse.Namespace) -> int:
    return check_config_command(args.config, sys.stdout)


def check_config_command(
    config_path: str, out: TextIO, err: TextIO | None = None, env: Mapping[str, str] | None = None
) -> int:
    # The config model loads here, not at the top: every command's parser is built on each `firsttoken` call.
    from monitor.config import DEFER, ConfigError, load_config

    err = sys.stderr if err is None else err
    try:
        config = load_config(config_path, env, secrets=DEFER)
    except ConfigError as exc:
        for line in exc.errors:
            err.write(f"{config_path}: {line}\n")
        return 2
    out.write(redact(report(config, config_path), config.secrets))
    for path, names in config.unset_secrets.items():
        refs = " and ".join("${" + name + "}" for name in names)
        verb = "is" if len(names) == 1 else "are"
        out.write(f"{config_path}: {path}: {refs} {verb} not set (needed by {needed_by(path)})\n")
    return 0


def needed_by(path: str) -> str:
    """Provider keys are sent by probes; notifier secrets by the leader delivering alerts."""
    return "run and probe" if path.startswith("providers") else "run"


def report(config: Config, config_path: str) -> str:
    from monitor.commands.slo_text import slo_lines
    from monitor.probe.cost import project_monthly, report_lines

    rows = [
        (
            t.id,
            t.protocol,
            t.base_url,
            format_duration(t.interval_s),
            format_duration(t.timeout_s),
            format_duration(t.ttft_timeout_s),
            ",".join(t.agents) or "*",
        )
        for t in config.targets
    ]
    lines = [
        f"config: {config_path}",
        f"database: {safe_database_url(config.database_url)}",
        f"agent: {config.agent}",
        "",
        *table(HEADERS, rows),
        "",
        *per_agent(config),
        summary(config),
        *notes(config),
        *slo_lines(config),
        "",
        *report_lines(project_monthly(config), config.budget),
    ]
    return "\n".join(lines) + "\n"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=True)]
    return [
        "  ".join(str(cell).ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in (headers, *rows)
    ]


AGENT_HEADERS = ("AGENT", "TARGETS", "PROBES/H", "PROVIDERS")
ANY_OTHER = "(any other)"


def per_agent(config: Config) -> list[str]:
    """The matrix per vantage point, when a check pins targets to agents (`agents:`).

    Agents are not declared anywhere: those a check names, this file's `agent`, and a row for
    every other name an agent may run under (it probes only the targets open to all)."""
    named = sorted({a for t in config.targets for a in t.agents} | {config.agent})
    if named == [config.agent] and all(not t.agents for t in config.targets):
        return []
    rows = []
    for name in [*named, ANY_OTHER]:
        mine = [t for t in config.targets if (not t.agents if name == ANY_OTHER else t.runs_on(name))]
        per_hour = sum(3600.0 / t.interval_s for t in mine)
        rows.append((name, str(len(mine)), f"{per_hour:,.0f}", ", ".join(sorted({t.provider for t in mine})) or "-"))
    return [*table(AGENT_HEADERS, rows), ""]


def summary(config: Config) -> str:
    mine = len(config.targets_for_agent(config.agent))
    parts = [
        _count(len(config.targets), "target") + f" ({mine} for agent {config.agent})",
        _count(len(config.providers), "provider"),
        _count(len(config.prompts), "prompt"),
        _count(len(config.alerts), "alert rule"),
        _count(len(config.notifiers), "notifier"),
        _count(len(config.silences), "silence"),
        *([_count(len(config.slos), "SLO")] if config.slos else []),
    ]
    return ", ".join(parts)


def notes(config: Config) -> list[str]:
    """Things that load fine but will surprise: an unused provider, a protocol not in this build."""
    from monitor.config import registered_protocols

    out = []
    used = {t.provider for t in config.targets}
    for name in config.providers:
        if name not in used:
            out.append(f"note: provider {name!r} is in no check, so nothing probes it")
    available = set(registered_protocols())
    for protocol in sorted({p.protocol for p in config.providers.values()} - available):
        out.append(f"note: protocol {protocol!r} is not available in this build; its targets will fail")
    from monitor.probe.cache_minimum import short_cache_prompts

    return out + capacity_notes(config) + short_cache_prompts(config)


def capacity_notes(config: Config) -> list[str]:
    """Provider-regions whose cap keeps their schedule only while probes are quicker than a flagship's.

    By Little's law a route starting `rate` probes a second keeps its schedule
    under a cap of `cap` in flight while probes average under cap / rate
    seconds; `firsttoken run` says the same from the durations it observes.
    """
    from monitor.agent.caps import GLOBAL_CEILING, INITIAL_DURATION_S, PER_ROUTE_CEILING

    rates: dict[str, float] = {}
    for t in config.targets_for_agent(config.agent):
        rates[f"{t.provider}@{t.region}"] = rates.get(f"{t.provider}@{t.region}", 0.0) + 1.0 / t.interval_s
    per_route = config.defaults.max_per_provider_region
    out = []
    for route, rate in sorted(rates.items()):
        cap = per_route if per_route is not None else PER_ROUTE_CEILING
        budget_s = cap / rate
        if budget_s < INITIAL_DURATION_S:
            setting = "max_per_provider_region" if per_route is not None else "the auto ceiling"
            out.append(
                f"note: {route} starts {rate:.2f} probes/s; under its cap of {cap} in flight ({setting}) it keeps "
                f"its schedule only while probes average under {budget_s:.1f} s"
            )
    total = sum(rates.values())
    cap = config.defaults.max_concurrency if config.defaults.max_concurrency is not None else GLOBAL_CEILING
    if total and cap / total < INITIAL_DURATION_S:
        out.append(
            f"note: agent {config.agent} starts {total:.2f} probes/s; under max_concurrency {cap} it keeps "
            f"its schedule only while probes average under {cap / total:.1f} s"
        )
    return out


def safe_database_url(url: str) -> str:
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        host = parts.netloc.rsplit("@", 1)[-1]
        return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:{MASK}@{host}"))
    except ValueError:
        return MASK


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
