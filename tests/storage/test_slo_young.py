"""An SLO whose period is longer than its data (DESIGN §12, monitor.slo.budget), on SQLite and
PostgreSQL: 45 hours of one-minute probes under a 30-day SLO, the first 30 of them failed. The
budget is the whole period's, estimated at the pace the probes were seen, so the outage spent 7% of
it; the burn-down starts there, never rises, and ends at the budget left (it used to start at
-455%: 30 bad probes against the 5.4 the first nine hours allow)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from dashboard import slo_view
from monitor.config import load_config_text
from monitor.sample import Sample
from monitor.storage.queries import insert_samples
from monitor.storage.queries.slo_report import slo_report
from monitor.storage.rollups import rollup_hours

DAY0 = datetime(2026, 3, 2, tzinfo=UTC)
FIRST = DAY0 + timedelta(hours=15)  # mid-day: the whole day DAY0 is then read from the daily tier
NOW = DAY0 + timedelta(days=2, hours=12)
HOURS = 45  # FIRST to NOW
BAD = 30
CONFIG = """
providers:
  p: {protocol: openai-chat, regions: {r: "http://127.0.0.1:9/v1"}, models: [m]}
prompts:
  short: {messages: [{role: user, content: hi}], max_tokens: 8}
checks: [{providers: [p], prompts: [short]}]
slos:
  - {name: young, objective: 99%, period: 30d}
  - {name: day, objective: 99%, period: 1d}
"""


@pytest.fixture
def young(engine):
    data = [
        Sample(
            target="p/m@r:short",
            provider="p",
            model="m",
            region="r",
            prompt="short",
            started_at=FIRST + timedelta(minutes=i),
            ok=i >= BAD,
            error_kind=None if i >= BAD else "server_error",
            ttft_ms=300.0 if i >= BAD else None,
        )
        for i in range(HOURS * 60)
    ]
    insert_samples(engine, data)
    rollup_hours(engine, DAY0, NOW, now=NOW + timedelta(hours=1))
    return engine


def test_a_young_scope_spends_the_whole_periods_budget_and_its_burn_down_starts_sane(young):
    config = load_config_text(CONFIG)
    report = slo_report(young, config.slos[0], config.targets, NOW)
    (status,) = report.scopes
    budget = status.budget
    assert (budget.probes, budget.bad) == (HOURS * 60, BAD)
    # 2,700 probes over 45 hours: 43,200 over 30 days, so a budget of 432 bad probes.
    assert budget.allowed_bad == pytest.approx(0.01 * HOURS * 60 * 720 / HOURS)
    assert budget.remaining == pytest.approx(1 - BAD / 432)
    assert not status.exhausted

    days, remaining = slo_view.burn_down(report, 0)
    drawn = remaining[~np.isnan(remaining)]
    assert len(drawn) == 3  # DAY0, DAY0 + 1, DAY0 + 2: NaN before the first probe
    assert drawn[0] == pytest.approx(1 - BAD / 432)  # the outage's day, not -455%
    assert np.all(np.diff(drawn) <= 1e-12) and drawn[0] <= 1
    assert drawn[-1] == pytest.approx(budget.remaining)
    assert days[~np.isnan(remaining)][0] == DAY0.timestamp()


def test_a_period_the_data_covers_keeps_the_plain_formula(young):
    """A 1-day SLO on the same data: the probes seen are the period's, as before."""
    config = load_config_text(CONFIG)
    (status,) = slo_report(young, config.slos[1], config.targets, NOW).scopes
    budget = status.budget
    assert budget.probes == 24 * 60 and budget.bad == 0
    assert budget.allowed_bad == pytest.approx(0.01 * 24 * 60)
