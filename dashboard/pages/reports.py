"""Reports: the weekly report and the SLA report (DESIGN §17), previewed as they are mailed or printed,
and downloaded as HTML or PDF (the SLA report also as JSON and CSV)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import streamlit as st

from dashboard import data, ui, urlstate
from monitor.reports.schedule import week_at
from monitor.reports.weekly import render_html, render_pdf

WEEKS_BACK = 12
MONTHS_BACK = 6
EVERY_PROVIDER = "Every provider (UTC)"
PREVIEW_HEIGHT_PX = 1100

ui.header(
    "Reports",
    "The weekly report product managers get by mail (each provider's week against the week before, incidents, "
    "SLO budgets, charts) and the SLA report of each provider contract, as `firsttoken report weekly` and "
    "`firsttoken report sla` make them. From the hourly rollups and the samples; built once per view for 5 minutes.",
)
ui.require_targets()
conf = data.settings()
config = conf.config
weekly_tab, sla_tab = st.tabs(["Weekly report", "SLA report"])

with weekly_tab:
    entries = {e.name: e for e in (config.reports if config is not None else ())}
    c1, c2 = st.columns(2)
    options = [*entries, EVERY_PROVIDER]
    choice = urlstate.bound(
        c1.selectbox, "Report", options, name="report", key="reports-entry", default=options[0],
        help="A `reports:` entry sets the providers and the time zone its weeks are cut in.",
    )  # fmt: skip
    entry = entries.get(choice)
    zone = entry.zone if entry is not None else ZoneInfo("UTC")
    weeks = [week_at(datetime.now(UTC), zone)]  # this week so far, then the whole weeks before it
    while len(weeks) <= WEEKS_BACK:
        weeks.append(weeks[-1].before())
    labels = [w.label for w in weeks]
    label = urlstate.bound(
        c2.selectbox, "Week", labels, name="week", key="reports-week", default=labels[1],
        help="ISO weeks, Monday to Monday; the first is this week so far, the default the last whole week",
    )  # fmt: skip
    providers = tuple(entry.providers) if entry is not None else ()
    report = ui.load(data.weekly_report, label, str(zone.key), providers)
    html = render_html(report)
    if entry is not None:
        st.caption(f"Mailed to {', '.join(entry.to)} every {entry.every} {entry.timezone}.")
    b1, b2, _ = st.columns([1, 1, 4])
    b1.download_button(
        "HTML", html, file_name=f"weekly-{label}.html", mime="text/html", icon=":material/download:",
        key="weekly-html", on_click="ignore",
    )  # fmt: skip
    b2.download_button(
        "PDF", lambda: render_pdf(report), file_name=f"weekly-{label}.pdf", mime="application/pdf",
        icon=":material/picture_as_pdf:", key="weekly-pdf", on_click="ignore",
    )  # fmt: skip
    st.iframe(html, height=PREVIEW_HEIGHT_PX)  # a frame of its own: the report's styles stay out of the page

with sla_tab:
    with_contract = sorted(p for p, spec in config.providers.items() if spec.contracts) if config is not None else []
    if not with_contract:
        st.info(
            "No provider has a `contract:` in the configuration, so there is no SLA to report. "
            "See docs/reports.md for a worked example.",
            icon=":material/info:",
        )
    else:
        from monitor.reports.sla import render_csv, render_json
        from monitor.reports.sla import render_html as sla_html
        from monitor.reports.sla import render_pdf as sla_pdf

        this_month = datetime.now(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
        months, at = [], this_month
        for _ in range(MONTHS_BACK):
            at = (at - timedelta(days=1)).replace(day=1)
            months.append(at.strftime("%Y-%m"))
        offered = [this_month.strftime("%Y-%m"), *months]
        month = urlstate.bound(
            st.selectbox, "Month", offered, name="month", key="sla-month", default=offered[1],
            help="A calendar month in UTC; the first is this month so far",
        )  # fmt: skip
        sla = ui.load(data.sla_report, month)
        page = sla_html(sla)
        cols = st.columns([1, 1, 1, 1, 2])
        files = (
            ("HTML", page, "html", "text/html"),
            ("PDF", lambda: sla_pdf(sla), "pdf", "application/pdf"),
            ("JSON", render_json(sla), "json", "application/json"),
            ("CSV", render_csv(sla), "csv", "text/csv"),
        )
        for col, (name, content, ext, mime) in zip(cols, files, strict=False):
            col.download_button(
                name, content, file_name=f"sla-{month}.{ext}", mime=mime, icon=":material/download:",
                key=f"sla-{ext}", on_click="ignore",
            )  # fmt: skip
        st.iframe(page, height=PREVIEW_HEIGHT_PX)
