"""The weekly report's numbers against a truth the test computes from the planted samples itself
(tests/reports/weekly_seed.py), on SQLite and PostgreSQL."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

import numpy as np
import pytest
from sqlalchemy import insert

from monitor.reports.schedule import parse_week
from monitor.reports.weekly import build_weekly_report, mail_message, render_html
from monitor.storage.histogram import MAX_RELATIVE_ERROR
from monitor.storage.models import IncidentRow
from tests.reports import weekly_seed as seed

QUANTILE_TOLERANCE = 2 * MAX_RELATIVE_ERROR  # a bucket's half width, and the rank step between two probes


def truth(rows, provider: str, start: datetime, end: datetime) -> dict:
    """The week's figures by definition, from the samples alone."""
    week = [s for s in rows if s.provider == provider and start <= s.started_at < end]
    ok = [s for s in week if s.ok]
    # Uptime: per target and UTC hour, the quorum of 2 agents is both, so the hour's down share is the
    # smaller of the agents' failure shares; hours inside the maintenance window count neither way.
    hours: dict[tuple[str, datetime], dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for s in week:
        hours[(s.target, s.started_at.replace(minute=0, second=0, microsecond=0))][s.agent].append(s.ok)
    probed_h = down_h = 0.0
    m_start, m_end = seed.MAINTENANCE
    for (_target, hour), agents in hours.items():
        if provider == "beta" and m_start <= hour < m_end:
            continue
        probed_h += 1
        shares = [1 - sum(oks) / len(oks) for oks in agents.values()]
        down_h += min(shares) if len(shares) == 2 else shares[0]
    return {
        "probes": len(week),
        "failed": len(week) - len(ok),
        "uptime": 1 - down_h / probed_h,
        "ttft_p50_ms": float(np.quantile([s.ttft_ms for s in ok], 0.5)),
        "ttft_p90_ms": float(np.quantile([s.ttft_ms for s in ok], 0.9)),
        "tps_p50": float(np.quantile([s.tps for s in ok], 0.5)),
        "spend_usd": sum(s.cost_usd for s in ok),
    }


@pytest.fixture
def planted(db, tmp_path):
    config = seed.config(tmp_path)
    rows = seed.plant(db, config)
    with db.begin() as conn:
        conn.execute(
            insert(IncidentRow.__table__).values(
                provider="alpha",
                title="alpha: errors from every vantage point",
                status="published",
                state="resolved",
                components=["alpha/m1", "alpha/m2"],
                started_at=seed.OUTAGES["alpha"][0][0],
                resolved_at=seed.OUTAGES["alpha"][0][1],
                created_at=seed.W48_START,
                updated_at=seed.W48_START,
                vantage_points=2,
            )
        )
    return db, config, rows


def test_each_figure_matches_the_truth_computed_from_the_samples(planted):
    engine, config, rows = planted
    week = parse_week("2026-W48", seed.BERLIN)
    assert (week.start, week.end) == (seed.W48_START, seed.W48_END)
    report = build_weekly_report(engine, config.targets, week, slos=config.slos, maintenance=config.maintenance)
    assert [s.provider for s in report.sections] == ["alpha", "beta"]
    for section in report.sections:
        for figures, (start, end) in (
            (section.now, (week.start, week.end)),
            (section.before, (week.before().start, week.start)),
        ):
            expected = truth(rows, section.provider, start, end)
            assert figures.probes == expected["probes"]
            assert figures.failed == expected["failed"]
            assert figures.uptime == pytest.approx(expected["uptime"], abs=1e-12), section.provider
            assert figures.spend_usd == pytest.approx(expected["spend_usd"], rel=1e-9)
            for key in ("ttft_p50_ms", "ttft_p90_ms", "tps_p50"):
                assert getattr(figures, key) == pytest.approx(expected[key], rel=QUANTILE_TOLERANCE), (
                    section.provider,
                    key,
                )
    alpha, beta = report.section("alpha"), report.section("beta")
    # The planted story, in the words the report uses.
    assert alpha.now.uptime == pytest.approx(1 - 6 / 336)  # 3 hours down on each of two models
    assert alpha.before.uptime == 1.0 and beta.now.uptime == 1.0  # beta's failures were in maintenance
    assert alpha.change("ttft_p50_ms").word == "worse" and alpha.change("ttft_p50_ms").arrow == "↑"
    assert alpha.change("uptime").word == "worse" and alpha.verdict == "worse"
    assert beta.change("tps_p50").word == "better" and beta.change("uptime").word == "better"
    assert beta.verdict == "better"
    assert alpha.incidents == 1 and [i.provider for i in report.incidents] == ["alpha"]


def test_the_chart_days_are_berlin_days_and_the_slo_budget_is_the_weeks(planted):
    engine, config, rows = planted
    week = parse_week("2026-W48", seed.BERLIN)
    report = build_weekly_report(engine, config.targets, week, slos=config.slos, maintenance=config.maintenance)
    alpha = report.section("alpha")
    for day, start in enumerate(week.day_starts()[:7]):
        values = [
            s.ttft_ms
            for s in rows
            if s.provider == "alpha" and s.ok and start <= s.started_at < start + timedelta(days=1)
        ]
        assert alpha.daily_ttft_p50_ms[day] == pytest.approx(float(np.quantile(values, 0.5)), rel=QUANTILE_TOLERANCE)
    (budget,) = report.budgets
    in_week = [s for s in rows if s.provider == "alpha" and week.start <= s.started_at < week.end]
    good = sum(1 for s in in_week if s.ok and s.ttft_ms < 2000)
    assert budget.slo == "alpha-fast" and budget.objective == pytest.approx(0.99)
    assert budget.attainment == pytest.approx(good / len(in_week), abs=1e-12)
    assert budget.remaining == pytest.approx(1 - (len(in_week) - good) / (0.01 * len(in_week)), abs=1e-9)
    html = render_html(report)
    assert html.count("data:image/png;base64,") == 2  # a chart per provider
    assert "alpha: errors from every vantage point" in html
    assert "2026-W48" in html and "Europe/Berlin" in html
    # attach_pdf: the same report as a PDF beside the mail's text and HTML.
    message = mail_message(report, sender="reports@example.com", to=["pm@example.com"], attach_pdf=True)
    (pdf,) = [part for part in message.walk() if part.get_content_type() == "application/pdf"]
    assert pdf.get_filename() == "weekly-2026-W48.pdf" and pdf.get_content().startswith(b"%PDF")


def test_a_reports_entrys_providers_narrow_the_report(planted):
    engine, config, _rows = planted
    week = parse_week("2026-W48", seed.BERLIN)
    report = build_weekly_report(engine, config.targets, week, providers=("beta",), slos=config.slos)
    assert [s.provider for s in report.sections] == ["beta"]
    assert report.incidents == () and report.budgets == ()
