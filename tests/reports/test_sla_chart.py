"""The SLA report's daily chart (monitor.reports.sla.chart): the minutes per UTC day, and a real PNG."""

from __future__ import annotations

from datetime import UTC, datetime

from monitor.config.contracts import Contract, UptimeTerms
from monitor.reports.sla.chart import daily_minutes, render_png
from monitor.reports.sla.minutes import DOWN, NO_DATA, UP, Evidence, Verdicts
from monitor.reports.sla.period import between
from monitor.reports.sla.render import render_html
from monitor.reports.sla.report import SlaReport, assess


def test_minutes_per_day_split_runs_at_midnight_and_the_png_is_real():
    period = between("2026-11-01T23:00:00Z", "2026-11-02T02:00:00Z")  # 180 minutes over two days
    verdicts = [UP] * 180
    for m in range(50, 70):  # 23:50 to 00:10: down across midnight
        verdicts[m] = DOWN
    for m in range(100, 130):  # 00:40 to 01:10: no data
        verdicts[m] = NO_DATA
    evidence = tuple(Evidence(m, ("p/m@r:q",), ("a",), 1, 1) for m in range(50, 70))
    result = assess(Contract(uptime=UptimeTerms()), "p", Verdicts(tuple(verdicts), None, evidence), period)
    days, down, slow, left = daily_minutes(result)
    assert [d.day for d in days] == [1, 2] and days[0] == datetime(2026, 11, 1, tzinfo=UTC)
    assert down == [10, 10] and slow == [0, 0] and left == [0, 30]
    png = render_png(result)
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5_000
    page = render_html(SlaReport(period, period.end, (result,)))
    assert page.count('<img class="chart" src="data:image/png;base64,') == 1
