"""The SLA report as JSON, CSV, HTML or PDF (DESIGN §17). Formatting only: the figures are `report.py`'s.

- JSON: the whole report, every minute that broke a contract and every left-out run.
- CSV: one row per minute that broke a contract or was left out of a measure (a spreadsheet filters
  it); the summary is JSON's and the page's.
- HTML (Jinja2, autoescaped) and the PDF made from it (WeasyPrint): a summary per contract, the runs
  of broken minutes, then every broken minute, the left-out runs, and the method in words.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from monitor.reports.pdf import html_to_pdf
from monitor.reports.sla.chart import data_url
from monitor.reports.sla.report import ContractResult, Measure, SlaReport, percent, utc

CSV_COLUMNS = (
    "contract",
    "provider",
    "measure",
    "minute_utc",
    "verdict",
    "reason",
    "targets",
    "vantage_points",
    "error_kinds",
    "request_ids",
)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _measure_json(measure: Measure | None) -> dict[str, Any] | None:
    if measure is None:
        return None
    return {
        "value": measure.value,
        "percent": percent(measure.value),
        "objective": measure.objective,
        "met": measure.met,
        "minute_rule": measure.condition,
        "minutes_counted": measure.counted,
        "minutes_bad": measure.bad,
        "minutes_left_out": measure.left_out_by_reason(),
        "broken_minutes": [
            {
                "minute": _iso(b.at),
                "targets": list(b.targets),
                "vantage_points": list(b.vantage_points),
                "voters": b.voters,
                "quorum": b.quorum,
                "error_kinds": b.error_kinds,
                "request_ids": list(b.request_ids),
                **({"values": b.values} if b.values else {}),
            }
            for b in measure.broken
        ],
        "left_out": [
            {"from": _iso(r.start), "to": _iso(r.end), "minutes": r.minutes, "reason": r.reason}
            for r in measure.left_out
        ],
    }


def contract_json(result: ContractResult) -> dict[str, Any]:
    return {
        "provider": result.provider,
        "contract": result.name,
        "match": result.match,
        "targets": list(result.targets),
        "vantage_points": list(result.vantage_points),
        "uptime": _measure_json(result.uptime),
        "latency": _measure_json(result.latency),
        "credit": None if result.credit is None else {"below": result.credit.below, "credit": result.credit.credit},
        "credit_tiers": [{"below": t.below, "credit": t.credit} for t in result.credit_tiers],
        "claim_deadline": _iso(result.claim_deadline),
        "method": list(result.method),
    }


def render_json(report: SlaReport) -> str:
    body = {
        "period": {
            "label": report.period.label,
            "from": _iso(report.period.start),
            "to": _iso(report.period.end),
            "minutes": report.period.minutes,
        },
        "generated_at": _iso(report.generated_at),
        "contracts": [contract_json(c) for c in report.contracts],
        "providers_without_contract": list(report.without_contract),
    }
    return json.dumps(body, indent=2) + "\n"


def render_csv(report: SlaReport) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for result in report.contracts:
        for measure in (result.uptime, result.latency):
            if measure is None:
                continue
            rows = [
                (
                    b.at,
                    "down" if measure.name == "uptime" else "slow",
                    "",
                    b.targets,
                    b.vantage_points,
                    ";".join(f"{k}={n}" for k, n in sorted(b.error_kinds.items())),
                    b.request_ids,
                )
                for b in measure.broken
            ]
            for run in measure.left_out:
                rows += [
                    (run.start + timedelta(minutes=i), "left out", run.reason, (), (), "", ())
                    for i in range(run.minutes)
                ]
            for at, verdict, reason, targets, agents, kinds, ids in sorted(rows, key=lambda r: r[0]):
                writer.writerow(
                    (
                        result.name,
                        result.provider,
                        measure.name,
                        _iso(at),
                        verdict,
                        reason,
                        ";".join(targets),
                        ";".join(agents),
                        kinds,
                        ";".join(ids),
                    )
                )
    return out.getvalue()


@cache
def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("monitor.reports.sla", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(percent=percent, utc=utc, share=lambda v: f"{v * 100:g}%")
    return env


def broken_runs(measure: Measure) -> list[dict[str, Any]]:
    """Consecutive broken minutes as one row each (what a claim names), with the union of their evidence."""
    out: list[dict[str, Any]] = []
    for b in measure.broken:
        last = out[-1] if out else None
        if last and last["end"] == b.at:
            last["end"] = b.at + timedelta(minutes=1)
            last["minutes"] += 1
        else:
            last = {
                "start": b.at,
                "end": b.at + timedelta(minutes=1),
                "minutes": 1,
                "targets": {},
                "agents": {},
                "kinds": {},
                "ids": {},
            }
            out.append(last)
        last["targets"].update(dict.fromkeys(b.targets))
        last["agents"].update(dict.fromkeys(b.vantage_points))
        for kind, n in b.error_kinds.items():
            last["kinds"][kind] = last["kinds"].get(kind, 0) + n
        last["ids"].update(dict.fromkeys(b.request_ids))
    return out


def render_html(report: SlaReport, *, for_pdf: bool = False) -> str:
    template = _environment().get_template("sla.html.j2")
    return template.render(report=report, broken_runs=broken_runs, for_pdf=for_pdf, iso=_iso, chart=data_url)


def render_pdf(report: SlaReport) -> bytes:
    return html_to_pdf(render_html(report, for_pdf=True))


RENDERERS = {"json": render_json, "csv": render_csv, "html": render_html, "pdf": render_pdf}
