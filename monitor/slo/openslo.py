"""OpenSLO v1 documents for the config's SLOs (`firsttoken slo rules --openslo`), for tools that
import them (the ratio metric is the same PromQL the Prometheus rules record)."""

from __future__ import annotations

from collections.abc import Sequence

from monitor.slo.prom_rules import SLO_PROBES, quote
from monitor.units import format_duration


def openslo_documents(slos: Sequence) -> list[dict]:
    docs = []
    for slo in slos:
        skipped = "cancelled" if slo.good.checks else "cancelled|assertion"
        total = f"{SLO_PROBES}{{slo={quote(slo.name)}}}"
        good = f'{SLO_PROBES}{{slo={quote(slo.name)}, good="true"}}'
        description = f"{slo.objective * 100:g}% of probes ok"
        if slo.good.bounds():
            description += " and within " + ", ".join(
                f"{m} {'below' if b is not None else 'above'} {b if b is not None else a:g}"
                for m, b, a in slo.good.bounds()
            )
        docs.append(
            {
                "apiVersion": "openslo/v1",
                "kind": "SLO",
                "metadata": {"name": slo.name, "displayName": slo.name},
                "spec": {
                    "description": description + f" (failed answer checks skipped: {skipped})",
                    "service": "firsttoken",
                    "budgetingMethod": "Occurrences",
                    "timeWindow": [{"duration": format_duration(slo.period_s), "isRolling": True}],
                    "indicator": {
                        "metadata": {"name": f"{slo.name}-probes"},
                        "spec": {
                            "ratioMetric": {
                                "counter": True,
                                "good": {"metricSource": {"type": "Prometheus", "spec": {"query": good}}},
                                "total": {"metricSource": {"type": "Prometheus", "spec": {"query": total}}},
                            }
                        },
                    },
                    "objectives": [{"displayName": slo.name, "target": slo.objective}],
                },
            }
        )
    return docs
