"""The bands the Trends page draws equal percentiles computed independently with numpy.

Ranges under a day read raw samples: exact (numpy's default 'linear' method).
Ranges of a day or more read hourly rollups: within the histogram's 1.6% bound.
Failed and cancelled probes never enter a percentile; failures count in the error rate.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from monitor.storage.db import make_engine
from monitor.storage.histogram import MAX_RELATIVE_ERROR
from monitor.storage.queries.targets import list_targets
from monitor.storage.queries.trends import QUANTILES, trend
from tests.dashboard.figures import figures, problems, values


def _expected(samples, start: datetime, step: timedelta, n: int, metric: str) -> list[np.ndarray | None]:
    out = []
    for i in range(n):
        lo, hi = start + i * step, start + (i + 1) * step
        values = [getattr(s, metric) for s in samples if s.ok and lo <= s.started_at < hi]
        out.append(np.percentile(values, [100 * q for q in QUANTILES]) if values else None)
    return out


def _check(series, expected, metric: str, rel: float) -> int:
    bands = getattr(series, metric)
    checked = 0
    for i, want in enumerate(expected):
        got = [bands.p01[i], bands.p10[i], bands.p50[i], bands.p90[i], bands.p99[i]]
        if want is None:
            assert got == [None] * 5
            continue
        assert got == pytest.approx(list(want), rel=rel), (metric, i)
        checked += 1
    return checked


@pytest.mark.parametrize(("span", "source", "rel"), [
    (timedelta(hours=6), "raw", 1e-9),
    (timedelta(days=2), "rollups", MAX_RELATIVE_ERROR),
])  # fmt: skip
def test_bands_match_numpy_percentiles(seeded, span, source, rel):
    url, data = seeded
    engine = make_engine(url)
    try:
        ref = next(t for t in list_targets(engine) if t.prompt == "long" and t.provider == "openai")
        tr = trend(engine, [ref], data.now - span, data.now, split_by="target")
    finally:
        engine.dispose()
    assert tr.source == source
    (series,) = tr.series
    start, step, n = series.bucket_starts[0], tr.bucket, len(series.bucket_starts)
    samples = data.of(ref.id)
    for metric in ("ttft_ms", "tps"):
        assert _check(series, _expected(samples, start, step, n, metric), metric, rel) >= 0.8 * n
    # Error rate: failures over measured probes, cancelled left out of both.
    for i in range(n):
        lo, hi = start + i * step, start + (i + 1) * step
        inside = [s for s in samples if lo <= s.started_at < hi and s.error_kind != "cancelled"]
        assert series.measured[i] == len(inside)
        assert series.failed[i] == sum(not s.ok for s in inside)


def test_trends_figure_carries_the_seeded_percentiles(app, seeded):
    """Through the page itself: the default view (one target's series over 24 h, from rollups)."""
    url, data = seeded
    at = app(url).run()
    at.switch_page("pages/trends.py").run()
    assert not problems(at)
    at.multiselect(key="trends-m").set_value(["claude-3-5-haiku"]).run()
    at.selectbox(key="trends-split").set_value("target").run()
    at.selectbox(key="trends-refresh").set_value("off").run()
    assert not problems(at)
    (fig,) = figures(at)
    target = "anthropic/claude-3-5-haiku@eu-west-1:long"
    median = next(
        t
        for t in fig["data"]
        if t.get("name") == target
        and t["type"] == "scatter"
        and t.get("mode") == "lines"
        and t.get("yaxis", "y") == "y"
    )
    xs = [datetime.fromisoformat(x).replace(tzinfo=UTC) for x in values(median["x"])]
    step = timedelta(hours=1)
    expected = _expected(data.of(target), xs[0], step, len(xs), "ttft_ms")
    compared = 0
    for x, y, (p10, p90, p01, p99), want in zip(
        xs, values(median["y"]), values(median["customdata"]), expected, strict=True
    ):
        if want is None:
            continue
        assert [p01, p10, y, p90, p99] == pytest.approx(list(want), rel=MAX_RELATIVE_ERROR), x
        compared += 1
    assert compared >= 20
