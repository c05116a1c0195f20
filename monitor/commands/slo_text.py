"""The config's SLOs in words, for `firsttoken check-config`: what each counts as good, and its scopes."""

from __future__ import annotations

from monitor.slo.scopes import members
from monitor.units import format_duration

MAX_SCOPES_LISTED = 20


def describe_good(slo) -> str:
    parts = ["ok"]
    for metric, below, above in slo.good.bounds():
        parts.append(f"{metric} {'<' if below is not None else '>'} {below if below is not None else above:g}")
    if not slo.good.checks:
        parts.append("answer checks ignored")
    return " and ".join(parts)


def slo_lines(config) -> list[str]:
    if not config.slos:
        return []
    lines = ["", "SLOs:"]
    for slo in config.slos:
        scopes = members(slo, config.targets)
        lines.append(
            f"  {slo.name}: {slo.objective * 100:g}% of probes good ({describe_good(slo)}) over "
            f"{format_duration(slo.period_s)}, one budget per {slo.per}: {len(scopes)} scope{'s' if len(scopes) != 1 else ''}"
        )
        if not scopes:
            lines.append("    note: no configured target matches it")
        for key, (_scope, ids) in list(scopes.items())[:MAX_SCOPES_LISTED]:
            lines.append(f"    {key} ({len(ids)} target{'s' if len(ids) != 1 else ''})")
        if len(scopes) > MAX_SCOPES_LISTED:
            lines.append(f"    … and {len(scopes) - MAX_SCOPES_LISTED} more")
    return lines
