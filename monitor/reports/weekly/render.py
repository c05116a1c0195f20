"""The weekly report as an HTML page, a PDF (WeasyPrint) and a mail (HTML and text, charts inline).

One Jinja2 body (`templates/_body.html.j2`, inline styles: mail clients drop <style>) serves all
three; only where the chart images come from differs: data: URLs in the page and the PDF (the PDF
engine fetches nothing else), `cid:` parts in the mail.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from email.message import EmailMessage

from monitor import fmt
from monitor.chartstyle import data_url
from monitor.mail.compose import InlineImage, Templates, compose
from monitor.reports.weekly.figures import FIGURES
from monitor.reports.weekly.report import WeeklyReport

VERDICT_COLORS = {"worse": "#d64545", "better": "#2e9d5b", "steady": "#57606a", "new": "#4c78a8", "no data": "#57606a"}
WORD_COLORS = {
    "worse": "#d64545",
    "better": "#2e9d5b",
    "steady": "#57606a",
    "more": "#57606a",
    "less": "#57606a",
    "": "#57606a",
}

_templates: Templates | None = None


def templates() -> Templates:
    global _templates
    if _templates is None:
        _templates = Templates("monitor.reports.weekly")
    return _templates


def summary(report: WeeklyReport) -> str:
    """One sentence for the top of the report: which providers changed, and how many incidents."""
    if not report.sections:
        return "No provider was probed."
    by_verdict: dict[str, list[str]] = {}
    for section in report.sections:
        by_verdict.setdefault(section.verdict, []).append(section.provider)
    words = {"worse": "Worse", "better": "Better", "new": "No probes the week before", "no data": "No probes this week"}
    parts = [f"{words[v]}: {fmt.listed(by_verdict[v])}." for v in words if v in by_verdict]
    if "steady" in by_verdict:
        parts.append(
            "Every provider held steady." if len(parts) == 0 else f"Steady: {fmt.listed(by_verdict['steady'])}."
        )
    parts.append(f"{fmt.counted(len(report.incidents), 'incident')}.")
    return " ".join(parts)


def _thresholds() -> str:
    words = []
    for f in FIGURES:
        if f.higher_is == "neutral":
            continue
        words.append(
            f"{f.threshold * 100:g}% for {f.label}" if f.relative else f"{f.threshold * 100:g} pp for {f.label}"
        )
    return fmt.listed(words)


def _context(report: WeeklyReport, image: Callable[[str], str | None]) -> dict:
    zone = report.week.zone

    def local(moment: datetime | None) -> str:
        return fmt.DASH if moment is None else moment.astimezone(zone).strftime("%a %d %b %H:%M")

    def lasted(incident) -> str:
        if incident.resolved_at is None:
            return "open"
        return fmt.span((incident.resolved_at - incident.started_at).total_seconds())

    last_day = report.week.monday.toordinal() + 6
    week_span = f"{report.week.monday:%a %d %b} to {datetime.fromordinal(last_day):%a %d %b %Y}"
    return {
        "report": report,
        "summary": summary(report),
        "week_span": week_span,
        "image": image,
        "local": local,
        "lasted": lasted,
        "pct": fmt.pct,
        "share": share_text,
        "thresholds": _thresholds(),
        "verdict_colors": VERDICT_COLORS,
        "word_colors": WORD_COLORS,
        "site_title": report.title,
        "footer_links": (),
    }


def share_text(value: float | None) -> str:
    """An SLO's objective, attainment or budget: two decimals (99.95%), where fmt.pct rounds to 100%."""
    return fmt.DASH if value is None else f"{value * 100:.2f}%"


def render_html(report: WeeklyReport) -> str:
    """A standalone page: charts inlined as data: URLs (the dashboard's preview, the PDF's source)."""
    return templates().render(
        "page.html.j2", _context(report, lambda p: data_url(report.charts[p]) if p in report.charts else None)
    )


def render_pdf(report: WeeklyReport) -> bytes:
    from monitor.reports.pdf import html_to_pdf

    return html_to_pdf(render_html(report))


def chart_cid(provider: str) -> str:
    return "chart-" + "".join(ch if ch.isalnum() else "-" for ch in provider)


def subject(report: WeeklyReport) -> str:
    worse = report.worse
    state = f"worse: {fmt.listed(list(worse))}" if worse else "no provider worse"
    return f"{report.title} {report.week.label}: {state}"


def mail_message(
    report: WeeklyReport,
    *,
    sender: str,
    to: Iterable[str],
    message_id: str | None = None,
    attach_pdf: bool = False,
) -> EmailMessage:
    """The report as one mail: text and HTML, each provider's chart an inline image of the HTML part,
    the PDF attached when asked."""
    images = [InlineImage(chart_cid(p), png, filename=f"{chart_cid(p)}.png") for p, png in report.charts.items()]
    context = _context(report, lambda p: f"cid:{chart_cid(p)}" if p in report.charts else None)
    message = compose(
        templates(), "mail", context, sender=sender, to=list(to), subject=subject(report), images=images,
        message_id=message_id,
    )  # fmt: skip
    if attach_pdf:
        message.add_attachment(
            render_pdf(report), maintype="application", subtype="pdf", filename=f"weekly-{report.week.label}.pdf"
        )
    return message


__all__ = ["chart_cid", "mail_message", "render_html", "render_pdf", "subject", "summary"]
