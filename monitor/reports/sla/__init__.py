"""Provider SLA evidence (DESIGN §17): what each provider owes under its `contract:`, proven minute by minute.

    report = build_sla_report(engine, config, month("2026-11"), providers=["bedrock"])
    render_html(report), render_pdf(report), render_json(report), render_csv(report)

`minutes.judge` (pure) decides every UTC minute from the probes by the quorum; `report.assess`
(pure) turns the verdicts into uptime, the latency SLI, the credit and the evidence; `build` reads
the samples and our maintenance windows; `render` formats.
"""

from monitor.reports.sla.build import build_sla_report
from monitor.reports.sla.period import between, month
from monitor.reports.sla.render import RENDERERS, render_csv, render_html, render_json, render_pdf

__all__ = [
    "RENDERERS",
    "between",
    "build_sla_report",
    "month",
    "render_csv",
    "render_html",
    "render_json",
    "render_pdf",
]
