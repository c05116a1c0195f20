"""`firsttoken slo rules`: Prometheus recording and alerting rules for the config's SLOs over
firsttoken's own /metrics, Sloth/Pyrra style (DESIGN §12), pure: SLOs in, a rules document out.

The series the rules need: `firsttoken_slo_probes_total{slo,provider,model,region,prompt,agent,good}`.
The agent judges every probe against each SLO whose `match:` takes its target, with the SLO's own
bounds and `checks:` (monitor.slo.good, the same judgement firsttoken's own burn-rate alerts make),
and leaves cancelled probes out; so the rules are exact, with no histogram bucket to round a bound to.

Each window's error ratio is recorded per scope and per agent (vantage point), as firsttoken's own
burn-rate alerts count (DESIGN §11, §12): never pooled over agents, so one agent's bad path cannot
burn a scope's budget on the others' behalf. The alerts are the workbook's pairs scaled to the period,
severity `page` and `ticket`, labelled `slo`; a pair holds for a scope when it trips on more than half
of the agents that probed the scope within its long window (`count by (scope)` of the agents where
both windows trip, against half the count of those whose long window holds a probe). That is
firsttoken's default quorum exactly (`required_agents`: more than half, hence at least 2 whenever 2
or more probed; one agent decides alone); SLOs take no `confirm:`. What Prometheus approximates:
its windows are time ranges over scraped counters (rate() needs two scrapes in range), where
firsttoken counts probes and judges each agent as of its own last probe.
"""

from __future__ import annotations

from collections.abc import Sequence

from monitor.slo.windows import PAGE, TICKET, burn_windows, window_lengths
from monitor.units import format_duration

SLO_PROBES = "firsttoken_slo_probes_total"
BY = {"target": "provider, model, region, prompt", "provider": "provider", "model": "model", "all": ""}
ALERT = "FirsttokenSloBurnRate"


def prom_duration(seconds: float) -> str:
    """A Prometheus duration: whole milliseconds, largest units first (`1h`, `1m10s`, `432ms`)."""
    return format_duration(round(seconds * 1000) / 1000)


def quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def record_name(kind: str, length_s: float) -> str:
    return f"firsttoken_slo:{kind}:rate{prom_duration(length_s)}"


def _scope(slo) -> str:
    """The labels that name one of the SLO's scopes, `slo` first (the recorded series carry it)."""
    by = BY[slo.per]
    return f"slo, {by}" if by else "slo"


def pair_holds(slo, window) -> str:
    """PromQL for one window pair holding on a scope: per agent both windows burn at or above the
    pair's factor, and those agents are more than half of the agents that probed the scope within
    the long window (an agent without a probe there has no ratio: 0/0 is NaN, and NaN >= 0 is false)."""
    name = quote(slo.name)
    threshold = f"{window.factor:g} * {round(slo.error_budget, 12):g}"
    long_ratio = f"{record_name('error_ratio', window.long_s)}{{slo={name}}}"
    short_ratio = f"{record_name('error_ratio', window.short_s)}{{slo={name}}}"
    scope = _scope(slo)
    tripped = f"count by ({scope}) (({long_ratio} >= {threshold}) and ({short_ratio} >= {threshold}))"
    probed = f"count by ({scope}) ({long_ratio} >= 0)"
    return f"({tripped} > {probed} / 2)"


def slo_rules(slos: Sequence) -> dict:
    """The rules document: per SLO, an error ratio recorded per window, scope and agent, and the
    page and ticket alerts with the quorum of vantage points."""
    groups = []
    for slo in slos:
        by = BY[slo.per]
        group_by = f" by ({by}, agent)" if by else " by (agent)"
        name = quote(slo.name)
        rules = []
        for length in window_lengths(slo.period_s):
            w = prom_duration(length)
            total = f"sum{group_by} (rate({SLO_PROBES}{{slo={name}}}[{w}]))"
            bad = f'sum{group_by} (rate({SLO_PROBES}{{slo={name}, good="false"}}[{w}]))'
            rules.append(
                {
                    "record": record_name("error_ratio", length),
                    # no bad probe yet: no `good="false"` series, nothing bad
                    "expr": f"({bad} or {total} * 0) / {total}",
                    "labels": {"slo": slo.name},
                }
            )
        for severity in (PAGE, TICKET):
            pairs = [w for w in burn_windows(slo.period_s) if w.severity == severity]
            rules.append(
                {
                    "alert": ALERT,
                    "expr": " or ".join(pair_holds(slo, w) for w in pairs),
                    "labels": {"severity": severity, "slo": slo.name},
                    "annotations": {
                        "summary": f"SLO {slo.name} ({slo.objective * 100:g}% over {format_duration(slo.period_s)}) "
                        f"is burning its error budget fast enough to {severity}",
                        "description": "Seen from {{ $value }} vantage points (agents), more than half of those "
                        "that probed the scope.",
                    },
                }
            )
        groups.append({"name": f"firsttoken-slo-{slo.name}", "rules": rules})
    return {"groups": groups}
