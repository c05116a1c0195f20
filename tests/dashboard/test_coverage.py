"""Honest partial periods: with 6 hours of history, a figure over 24 h, 7 d, 30 d or 90 d says so.

Six hours of history used to read as the same uptime under all four periods
(e.g. 98.96% four times). Each figure now says how much of its period has
data, or shows none when that is too thin to stand for the period.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest

from dashboard import coverage
from monitor.sample import Sample
from monitor.storage import migrate
from monitor.storage.db import make_engine
from monitor.storage.queries.agents import sync_targets
from monitor.storage.queries.overview import overview
from monitor.storage.queries.samples import insert_samples
from monitor.storage.queries.trends import TargetRef
from monitor.storage.rollups import rollup_hours
from tests.dashboard.conftest import BACKENDS
from tests.pg import pg_url

HISTORY = timedelta(hours=6)
REFS = tuple(
    TargetRef(f"newco/model-a@us-east-1:{prompt}", "newco", "model-a", "us-east-1", prompt)
    for prompt in ("short", "long")
)


def six_hours(now: datetime) -> list[Sample]:
    rng = random.Random(5)
    out = []
    for ref in REFS:
        t = now - HISTORY
        while t < now:
            ok = rng.random() > 0.02
            out.append(
                Sample(
                    target=ref.id,
                    provider=ref.provider,
                    model=ref.model,
                    region=ref.region,
                    prompt=ref.prompt,
                    started_at=t,
                    ok=ok,
                    error_kind=None if ok else "server_error",
                    ttft_ms=rng.lognormvariate(6, 0.3) if ok else None,
                    http_status=200 if ok else 500,
                    agent="coverage-test",
                )
            )
            t += timedelta(minutes=2)
    return out


@pytest.fixture(scope="module", params=BACKENDS)
def young(request, tmp_path_factory) -> Iterator[tuple[str, datetime]]:
    """A database whose whole history is the last six hours."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('young') / 'young.db'}"
    else:
        url = pg_url(request.getfixturevalue("pg_server").create_database())
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    engine = make_engine(url)
    migrate.upgrade(engine)
    sync_targets(engine, [SimpleNamespace(**vars(r), protocol="openai-chat") for r in REFS])
    insert_samples(engine, six_hours(now))
    rollup_hours(engine, now - HISTORY - timedelta(hours=1), now + timedelta(hours=1), now=now)
    engine.dispose()
    yield url, now


def test_health_uptime_says_how_much_of_each_period_has_data(app, young):
    url, _ = young
    at = app(url).run()
    at.switch_page("pages/health.py").run()
    assert not at.exception, [e.value for e in at.exception]
    uptime = at.dataframe[0].value
    row = uptime.iloc[0]
    figures = [str(row[name]) for name in ("24 h", "7 d", "30 d", "90 d")]
    assert len(set(figures)) > 1, figures  # not one figure four times
    partial = re.compile(r"^\d+\.\d\d% · [67] h of data$")
    assert partial.match(figures[0]) and partial.match(figures[1]), figures
    # 6 h is under 1% of 30 and 90 days: no figure, only how little there is.
    assert re.match(r"^— · [67] h of data$", figures[2]) and re.match(r"^— · [67] h of data$", figures[3]), figures


def test_overview_says_its_baseline_stands_on_part_of_a_day(young):
    url, now = young
    engine = make_engine(url)
    try:
        ov = overview(engine, REFS, now)
    finally:
        engine.dispose()
    for row in ov.targets:
        assert row.baseline_hours in (5, 6)  # the 24 h before the last hour: 5 of them have data
        assert re.match(r"^ · [56] h of data$", coverage.note(row.baseline_hours * 3600, 86400))
    for h in ov.headlines:
        assert h.covered_s == 3600  # the last hour is fully covered: no note
        assert coverage.figure("2.0%", h.covered_s, 3600) == "2.0%"


def test_coverage_wording():
    assert coverage.figure("99.00%", 86400, 86400) == "99.00%"
    assert coverage.figure("99.00%", 6 * 3600, 86400) == "99.00% · 6 h of data"
    assert coverage.figure("99.00%", 20 * 60, 3600) == "99.00% · 20 min of data"
    assert coverage.figure("99.00%", 3 * 86400, 30 * 86400) == "99.00% · 3 d of data"
    assert coverage.figure("99.00%", 6 * 3600, 90 * 86400) == "— · 6 h of data"
    assert coverage.figure(None, 0, 86400) == "—"
