"""The weekly report (DESIGN §17): per provider uptime, TTFT p50/p90, TPS, error rate, probes and
spend against the week before, the week's incidents, SLO budgets and a chart per provider.

    from monitor.reports.weekly import build_weekly_report, render_html, render_pdf, mail_message

`figures` is the pure core (values in, changes and verdicts out), `read` the thin database readers,
`chart` the PNGs, `render` the page, the PDF and the mail (Jinja2 templates in `templates/`).
"""

from monitor.reports.weekly.render import mail_message, render_html, render_pdf
from monitor.reports.weekly.report import ProviderSection, WeeklyReport, build_weekly_report

__all__ = ["ProviderSection", "WeeklyReport", "build_weekly_report", "mail_message", "render_html", "render_pdf"]
