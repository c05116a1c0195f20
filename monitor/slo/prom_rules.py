"""`firsttoken slo rules`: Prometheus recording and alerting rules for the config's SLOs over
firsttoken's own /metrics, Sloth/Pyrra style (DESIGN §12), pure: SLOs in, a rules document out.

The series the rules need: `firsttoken_slo_probes_total{slo,provider,model,region,prompt,agent,good}`.
The agent judges every probe against each SLO whose `match:` takes its target, with the SLO's own
bounds and `checks:` (monitor.slo.good, the same judgement firsttoken's own burn-rate alerts make),
and leaves cancelled probes out; so the rules are exact, with no histogram bucket to round a bound to.

Each window's error ratio is bad / all probes, summed over agents and the scope's labels. The alerts
are the workbook's pairs scaled to the period, severity `page` and `ticket`, labelled `slo`.
firsttoken's own alerts also ask for a quorum of vantage points (DESIGN §11); these rules pool the
agents.
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


def slo_rules(slos: Sequence) -> dict:
    """The rules document: per SLO, an error ratio recorded per window, and the page and ticket alerts."""
    groups = []
    for slo in slos:
        by = BY[slo.per]
        group_by = f" by ({by})" if by else ""
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
        budget = round(slo.error_budget, 12)
        for severity in (PAGE, TICKET):
            pairs = [w for w in burn_windows(slo.period_s) if w.severity == severity]
            expr = " or ".join(
                f"(({record_name('error_ratio', w.long_s)}{{slo={quote(slo.name)}}} >= {w.factor:g} * {budget:g})"
                f" and ({record_name('error_ratio', w.short_s)}{{slo={quote(slo.name)}}} >= {w.factor:g} * {budget:g}))"
                for w in pairs
            )
            rules.append(
                {
                    "alert": ALERT,
                    "expr": expr,
                    "labels": {"severity": severity, "slo": slo.name},
                    "annotations": {
                        "summary": f"SLO {slo.name} ({slo.objective * 100:g}% over {format_duration(slo.period_s)}) "
                        f"is burning its error budget fast enough to {severity}",
                    },
                }
            )
        groups.append({"name": f"firsttoken-slo-{slo.name}", "rules": rules})
    return {"groups": groups}
