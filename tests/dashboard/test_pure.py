"""The pure parts: vectorised percentiles, state rules, colours and figure builders."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from dashboard import charts, palette, status
from dashboard.charts_status import GridCell
from monitor.storage import histogram
from monitor.storage.queries import histmatrix
from monitor.storage.queries.alertviews import AlertView
from monitor.storage.queries.compare import ModelStats
from monitor.storage.queries.tiers import reads_raw
from monitor.storage.queries.trends import Bands, Trend, TrendSeries, bucket_for
from tests.dashboard.figures import values

T0 = datetime(2026, 1, 1, tzinfo=UTC)
QS = (0.0, 0.01, 0.1, 0.5, 0.9, 0.99, 1.0)


def test_hist_quantiles_equal_the_storage_histogram_on_merged_hours():
    rng = random.Random(5)
    texts, groups = [], []
    for g in range(30):
        for _ in range(rng.randint(0, 6)):
            values = [rng.lognormvariate(6, 1) for _ in range(rng.randint(0, 40))] + [0.0]
            texts.append(histogram.to_json(histogram.from_values(values)))
            groups.append(g)
    got, counts = histmatrix.hist_quantiles(texts, np.array(groups), 30, QS)
    for g in range(30):
        merged = histogram.merge(histogram.from_json(t) for t, gg in zip(texts, groups, strict=True) if gg == g)
        want = histogram.quantiles(merged, QS)
        assert counts[g] == histogram.count(merged)
        if want[0] is None:
            assert np.isnan(got[g]).all()
        else:
            assert list(got[g]) == pytest.approx(want, rel=1e-12)


def test_hist_decode_reads_concatenated_histograms_as_one():
    a, b = '{"10":2,"-5":1}', '{"10":3}'
    rows, buckets, counts = histmatrix.decode([a + "," + b, None, "{}"])
    assert rows.tolist() == [0, 0, 0] and buckets.tolist() == [10, -5, 10] and counts.tolist() == [2, 1, 3]


def test_value_quantiles_are_numpys_linear_percentiles_per_group():
    rng = np.random.default_rng(1)
    values = rng.lognormal(5, 1, 2000)
    values[::50] = np.nan  # missing values are left out
    groups = rng.integers(0, 9, 2000)
    got, counts = histmatrix.value_quantiles(values, groups, 10, QS)
    for g in range(9):
        v = values[(groups == g) & ~np.isnan(values)]
        assert counts[g] == v.size
        assert got[g] == pytest.approx(np.percentile(v, [100 * q for q in QS]))
    assert np.isnan(got[9]).all()


def test_buckets_are_sized_to_the_range_and_rollups_serve_a_day_or_more():
    assert bucket_for(timedelta(hours=1)) == timedelta(minutes=2)
    assert bucket_for(timedelta(days=30)) == timedelta(hours=6)
    assert bucket_for(timedelta(days=90)) == timedelta(days=1)
    assert reads_raw(T0, T0 + timedelta(hours=6)) and not reads_raw(T0, T0 + timedelta(days=1))


@pytest.mark.parametrize(("measured", "failed", "ratio", "state"), [
    (0, 0, None, status.NO_DATA),
    (12, 1, None, status.HEALTHY),  # one failure is noise
    (12, 2, None, status.DEGRADED),
    (12, 8, None, status.DOWN),
    (60, 0, 1.6, status.DEGRADED),
    (60, 0, 1.2, status.HEALTHY),
])  # fmt: skip
def test_state_rules(measured, failed, ratio, state):
    assert status.state_of(measured, failed, ratio) == state
    code = status.state_codes(np.array([[measured]]), np.array([[failed]]), np.array([[ratio or np.nan]]))
    assert status.worst([state]) == state
    assert code[0][0] == {status.NO_DATA: 0, status.HEALTHY: 1, status.DEGRADED: 2, status.DOWN: 3}[state]


def test_provider_status_wording():
    assert status.provider_status([status.HEALTHY] * 3) == status.OPERATIONAL
    assert status.provider_status([status.HEALTHY, status.DEGRADED]) == status.DEGRADED_PERF
    assert status.provider_status([status.HEALTHY, status.HEALTHY, status.DOWN]) == status.PARTIAL
    assert status.provider_status([status.DOWN, status.DOWN, status.HEALTHY]) == status.MAJOR
    assert status.provider_status([status.HEALTHY], ["error_rate"]) == status.PARTIAL


def test_runs_merge_consecutive_periods():
    starts = [T0 + timedelta(hours=i) for i in range(5)]
    ends = [s + timedelta(hours=1) for s in starts]
    states = [status.DEGRADED, status.DEGRADED, status.HEALTHY, status.DOWN, status.DOWN]
    runs = status.runs("lane", starts, ends, states)
    assert [(r.state, r.start, r.end) for r in runs] == [
        (status.DEGRADED, starts[0], ends[1]),
        (status.DOWN, starts[3], ends[4]),
    ]


def test_provider_colours_are_stable_across_pages():
    a = palette.provider_colors(["openai", "anthropic", "zeta"])
    b = palette.provider_colors(["zeta", "openai"])
    assert a["openai"] == b["openai"] == palette.KNOWN["openai"]
    assert a["zeta"] == b["zeta"]


def _alert(**kw) -> AlertView:
    base = dict(id=1, rule="ttft-regression", scope_kind="target", scope_key="p/m@r:q", provider="p", model="m",
                region="r", prompt="q", state="resolved", severity="page", metric="ttft_ms", value=2.0, baseline=1.0,
                started_at=T0, fired_at=T0, resolved_at=T0 + timedelta(hours=1), summary=None, silenced=False)  # fmt: skip
    return AlertView(**{**base, **kw})


def test_trend_figure_has_bands_median_error_strip_and_one_span_per_overlapping_alert_group():
    n = 4
    x = tuple(T0 + timedelta(hours=i) for i in range(n))
    bands = Bands(*[tuple(float(v * (i + 1)) for i in range(n)) for v in (1, 2, 3, 4, 5)])
    series = TrendSeries("p/m", "p", x, bands, bands, (10,) * n, (1,) * n)
    trend = Trend(T0, T0 + timedelta(hours=n), timedelta(hours=1), "rollups", (series,))
    alerts = [_alert(id=1), _alert(id=2, started_at=T0 + timedelta(minutes=30), fired_at=None)]
    fig = charts.trend_figure(trend, alerts, now=T0 + timedelta(hours=n)).to_dict()
    medians = [t for t in fig["data"] if t.get("name") == "p/m" and t["type"] == "scatter"]
    assert len(medians) == 2  # TTFT and TPS
    assert values(medians[0]["y"]) == [3.0, 6.0, 9.0, 12.0]
    assert values(next(t for t in fig["data"] if t["type"] == "bar")["y"]) == [10.0] * n
    assert len([s for s in fig["layout"]["shapes"] if s["type"] == "rect"]) == 1
    assert "ms" in fig["layout"]["yaxis"]["title"]["text"]


def test_a_fresh_marked_alert_after_the_last_bin_keeps_its_label_on_the_axis():
    # A webhook's link opened at once: the alert began after the trend's last bin, where an axis sized
    # to the data ended, and Plotly dropped the label (the browser test saw no "▼ alert" mark).
    n = 3
    x = tuple(T0 + timedelta(hours=i) for i in range(n))
    bands = Bands(*[tuple(float(v) for _ in range(n)) for v in (1, 2, 3, 4, 5)])
    trend = Trend(
        T0,
        T0 + timedelta(hours=n),
        timedelta(hours=1),
        "rollups",
        (TrendSeries("p/m", "p", x, bands, bands, (0,) * n, (1,) * n),),
    )
    begun = T0 + timedelta(hours=n, minutes=10)
    fresh = _alert(id=7, state="firing", started_at=begun, fired_at=begun, resolved_at=None)
    fig = charts.trend_figure(trend, [fresh], now=begun + timedelta(minutes=1), marked=fresh).to_dict()
    low, high = (datetime.fromisoformat(str(v)) for v in fig["layout"]["xaxis"]["range"])
    assert low <= T0.replace(tzinfo=None) and high > begun.replace(tzinfo=None) + timedelta(minutes=1)
    assert any(a["text"] == "▼ alert #7: ttft-regression" for a in fig["layout"]["annotations"])


def test_other_figures_build_from_plain_values():
    stats = [
        ModelStats("openai", "small", "short", 100, 1, 200.0, 300.0, 500.0, 80.0, 100.0, 120.0, 17.0, 64.0),
        ModelStats("openai", "small", "long", 100, 0, 500.0, 800.0, 1200.0, 80.0, 100.0, 120.0, 4000.0, 64.0),
        ModelStats("anthropic", "big", "short", 100, 5, 400.0, 600.0, 900.0, 40.0, 50.0, 60.0, 17.0, 64.0),
    ]
    assert charts.compare_bars(stats[::2], {"openai/small": 0.05}).data
    assert len(charts.ttft_vs_prompt(stats).data) == 2
    assert len(charts.ttft_vs_tps(stats).data) == 2
    grid = charts.overview_grid([GridCell("openai/small", "r", status.DOWN, "300 ms", "down")])
    assert grid.data[0].z[0][0] == status.STATES.index(status.DOWN)
    period = status.Period("r · m", status.DEGRADED, T0, T0 + timedelta(hours=2))
    gantt = charts.timeline_gantt([period], ["r · m"], T0, T0 + timedelta(days=1))
    assert gantt.data[0].x[0] == 2 * 3600 * 1000
    bars = charts.health_bars(["m · r"], [T0], [["#2e9d5b"]], [["100%"]])
    assert bars.data[0].z[0][0] == 0
    assert charts.samples_scatter([T0], [1.0], [True], "ttft_ms").data


def test_a_window_ending_now_holds_the_samples_written_this_second():
    """`data.now()` is the end of the current 10-second step, never before the present: the probes that
    just fired an alert are inside a window ending "now" when its link is opened at once."""
    from dashboard import data

    for _ in range(3):
        before = datetime.now(UTC)
        end = data.now()
        assert end > before and end - before <= timedelta(seconds=10)
        assert end.second % 10 == 0 and end.microsecond == 0


def test_the_alerts_table_says_what_held_an_alert_back():
    """DESIGN §15: an inhibited or muted alert is shown, with why nobody was told of it."""
    from dashboard import alert_rows

    now = T0 + timedelta(hours=2)
    rows = alert_rows.rows(
        [_alert(id=3, inhibited_by=7), _alert(id=4, muted="maintenance", silenced=True), _alert(id=5)], now
    )
    assert [r["held back"] for r in rows] == ["inhibited by #7", "muted: maintenance", ""]
