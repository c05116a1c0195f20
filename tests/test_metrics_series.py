"""SeriesHistogram renders what prometheus_client renders, much faster."""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from monitor.metrics import LABELS, TTFT_BUCKETS_S, ProbeMetrics
from monitor.metrics_series import SeriesHistogram
from monitor.sample import Sample


def families(text: str) -> dict:
    """name -> sorted samples, creation times left out (they are clocks, not data)."""
    out = {}
    for family in text_string_to_metric_families(text):
        if family.name.endswith("_created"):
            continue
        out[family.name] = (family.type, sorted((s.name, sorted(s.labels.items()), s.value) for s in family.samples))
    return out


_label = st.text(alphabet=st.sampled_from('ab"\\\n:/é '), max_size=6)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.tuples(_label, _label),
            st.one_of(st.sampled_from([0.0, 0.05, 0.1, 1.0, 60.0, 61.0, math.inf]), st.floats(0, 100)),
        ),
        max_size=30,
    )
)
def test_same_text_as_prometheus_client(observations):
    registry = CollectorRegistry()
    reference = Histogram("h_seconds", "Doc", ("a", "b"), buckets=TTFT_BUCKETS_S, registry=registry)
    ours = SeriesHistogram("h_seconds", "Doc", ("a", "b"), TTFT_BUCKETS_S)
    for labels, value in observations:
        reference.labels(*labels).observe(value)
        ours.observe(labels, value)
    assert families(ours.render()) == families(generate_latest(registry).decode())


def test_a_thousand_targets_scrape_quickly():
    # Regression: prometheus_client took 2.6 s of CPU for this (4-6 s in the soak),
    # holding the GIL the probes' event loop needs.
    metrics = ProbeMetrics()
    now = datetime.now(UTC)
    for i in range(1000):
        metrics.observe(
            Sample(
                target=f"p{i % 10}/m{i}@r{i % 4}:short", provider=f"p{i % 10}", model=f"model-{i}", region=f"r{i % 4}",
                prompt="short", started_at=now, ok=True, ttft_ms=120, ttft_answer_ms=130, total_ms=900, tps=80,
                sched_lag_ms=1, agent="a",
            )
        )  # fmt: skip
    started = time.perf_counter()
    body = metrics.exposition()
    elapsed = time.perf_counter() - started
    names = {f.name for f in text_string_to_metric_families(body.decode())}
    assert {"firsttoken_ttft_seconds", "firsttoken_decode_tokens_per_second", "firsttoken_probes"} <= names
    assert body.count(b"firsttoken_ttft_seconds_bucket{") == 1000 * (len(TTFT_BUCKETS_S) + 1)
    assert elapsed < 0.8, elapsed
    assert len(LABELS) == 5
