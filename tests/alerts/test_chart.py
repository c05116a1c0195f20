"""The alert chart (DESIGN §18): what it plots for each kind of alert, and the PNG it draws from stored samples."""

from __future__ import annotations

import io
import random
from datetime import timedelta

import numpy as np
from PIL import Image, ImageStat

from monitor.alerts.chart import ChartSpec, Line, render_png
from monitor.alerts.charts import CHART_SPAN, AlertCharts, band_of, plot_of
from monitor.alerts.payload import build_body
from monitor.alerts.records import AlertRecord
from monitor.alerts.sample import SAMPLE_ALERT_ID, sample_body
from monitor.alerts.scope import Scope
from monitor.storage.queries import insert_samples
from monitor.storage.queries.alertchart import AgentBuckets, per_agent

from .conftest import make_config
from .helpers import T0, config_spec, sample

END = T0 + timedelta(hours=8)
CHANGED = END - timedelta(minutes=50)
TARGET = "p/m0@r1:short"


def png_facts(png: bytes) -> tuple[tuple[int, int], float]:
    """(size, the spread of its pixels): a blank or one-colour image has none."""
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG"
    return image.size, max(ImageStat.Stat(image.convert("RGB")).stddev)


def regression_samples(rng: random.Random):
    """Two agents probing every minute for 7 hours; the last 50 minutes twice as slow from a1 and a2, a3 normal."""
    out = []
    t = END - timedelta(hours=7)
    while t < END:
        for agent in ("a1", "a2", "a3"):
            slow = t >= CHANGED and agent != "a3"
            out.append(sample(TARGET, t, (900.0 if slow else 420.0) * rng.lognormvariate(0, 0.05), agent=agent))
        t += timedelta(minutes=1)
    return out


def firing_body(**kw):
    record = AlertRecord(
        rule="slow", scope=Scope("p", "r1", "m0", "short"), state="firing", severity="page", metric="ttft_ms",
        started_at=CHANGED, fired_at=CHANGED + timedelta(minutes=2), value=900.0, baseline=420.0,
        agents=("a1", "a2"), agents_clear=("a3",),
    )  # fmt: skip
    return build_body(record, "firing", 5, None) | kw


def test_the_chart_of_a_regression_from_stored_samples(db, tmp_path):
    config = make_config(config_spec(models=("m0", "m1")), tmp_path)
    insert_samples(db, regression_samples(random.Random(3)))
    series = per_agent(db, [TARGET], "ttft_ms", END - CHART_SPAN, END, bucket_s=300)
    assert [s.agent for s in series] == ["a1", "a2", "a3"] and len(series[0].values) == 72
    a1 = series[0].values
    assert 380 < np.nanmedian(a1[:50]) < 460 and 820 < np.nanmedian(a1[-8:]) < 980  # the bucket medians
    assert 380 < np.nanmedian(series[2].values[-8:]) < 460
    charts = AlertCharts(db, lambda: config, clock=lambda: END)
    png = charts.for_body(firing_body())
    (width, height), spread = png_facts(png)
    assert width >= 400 and height >= 200 and spread > 20
    # The stored alert is drawn the same way; one that does not exist is not.
    assert charts.for_alert(999) is None


def test_error_rate_is_each_buckets_failed_share(db):
    at = END - timedelta(minutes=30)
    rows = [sample(TARGET, at + timedelta(seconds=i), 400.0, ok=i % 4 != 0) for i in range(40)]
    rows.append(sample(TARGET, at, None, ok=False, error_kind="cancelled"))  # no measurement
    insert_samples(db, rows)
    (one,) = per_agent(db, [TARGET], "error_rate", END - CHART_SPAN, END, bucket_s=300)
    assert np.nanmax(one.values) == 0.25 and np.isnan(one.values[0])


def test_what_each_alert_plots(tmp_path):
    spec = config_spec(models=("m0", "m1"), regions=("r1", "r2"))
    spec["alerts"] = [
        {"name": "slow", "metric": "ttft_ms", "kind": "threshold", "above": 300, "match": {"model": "m0"}},
        {"name": "new-build", "metric": "served_by", "kind": "change"},
    ]
    spec["slos"] = [{"name": "fast", "objective": "99%", "good": {"ttft_ms": {"below": "1500ms"}}, "per": "provider"}]
    config = make_config(spec, tmp_path)
    group = firing_body(scope={"provider": "p", "model": None, "region": "r1", "prompt": None, "agent": None})
    plot = plot_of(group, config, END)
    assert plot.target_ids == ("p/m0@r1:short",)  # the provider-region's targets the rule matches
    assert (plot.metric, plot.reference, plot.level) == ("ttft_ms", "threshold", 420.0)
    assert (plot.start, plot.end) == (END - CHART_SPAN, END)
    slo = firing_body(rule="slo:fast", slo="fast", metric="burn_rate", baseline=14.4,
                      scope={"provider": "p", "model": None, "region": None, "prompt": None})  # fmt: skip
    plot = plot_of(slo, config, END)
    assert (plot.metric, plot.reference, plot.level) == ("ttft_ms", "SLO bound", 1500.0)
    assert len(plot.target_ids) == 4
    change = firing_body(rule="new-build", metric="served_by", baseline="a-3", value="b-7")
    assert (plot_of(change, config, END).metric, plot_of(change, config, END).level) == ("ttft_ms", None)
    resolved = firing_body(resolved_at=(END - timedelta(hours=2)).isoformat())
    assert plot_of(resolved, config, END).end == END - timedelta(hours=2) + timedelta(minutes=30)


def test_the_band_is_where_it_sat_before_the_change():
    t = np.arange(10) * 300.0
    before = AgentBuckets("a1", t, np.array([100.0, 110, 90, 105, 95, 400, 410, np.nan, 405, 420]))
    lo, hi = band_of([before], CHANGED.__class__.fromtimestamp(1500.0, CHANGED.tzinfo))
    assert 90 <= lo < hi <= 110
    assert band_of([before], None) is None
    assert band_of([before], CHANGED.__class__.fromtimestamp(600.0, CHANGED.tzinfo)) is None  # 2 points only


def test_the_sample_alert_has_a_chart_without_any_sample(tmp_path):
    config = make_config(config_spec(), tmp_path)
    charts = AlertCharts(None, lambda: config, clock=lambda: END)
    body = sample_body(config, END)
    assert body["alert_id"] == SAMPLE_ALERT_ID
    (width, height), spread = png_facts(charts.for_alert(SAMPLE_ALERT_ID))
    assert (width, height) >= (400, 200) and spread > 20


def test_an_empty_window_still_draws_axes_and_says_so():
    spec = ChartSpec(title="ttft_ms of nothing", metric="ttft_ms", start=T0, end=T0 + CHART_SPAN,
                     lines=(Line("a1", [T0.timestamp()], [None], "#10a37f"),))  # fmt: skip
    (width, height), spread = png_facts(render_png(spec))
    assert (width, height) == (960, 400) and spread > 5
