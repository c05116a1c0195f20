"""SeriesHistogram renders what prometheus_client renders, much faster."""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from monitor.agent.metrics import LABELS, TTFT_BUCKETS_S, ProbeMetrics
from monitor.agent.metrics_series import CHUNK_BYTES, SeriesCounter, SeriesHistogram
from monitor.sample import Sample


def without_created(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if "_created" not in line)


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
    reference = Histogram("h_seconds", "Doc", ("b", "a"), buckets=TTFT_BUCKETS_S, registry=registry)
    ours = SeriesHistogram("h_seconds", "Doc", ("b", "a"), TTFT_BUCKETS_S)  # written sorted: a, b
    for labels, value in observations:
        reference.labels(*labels).observe(value)
        ours.observe(labels, value)
    assert families(ours.render()) == families(generate_latest(registry).decode())
    assert without_created(ours.render()) == without_created(generate_latest(registry).decode())


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.tuples(_label, _label), st.sampled_from([1, 2, 0.5])), max_size=30))
def test_counter_same_text_as_prometheus_client(increments):
    registry = CollectorRegistry()
    reference = Counter("probes", "Doc", ("a", "b"), registry=registry)
    ours = SeriesCounter("probes", "Doc", ("a", "b"))
    for labels, amount in increments:
        reference.labels(*labels).inc(amount)
        ours.inc(labels, amount)
    assert families(ours.render()) == families(generate_latest(registry).decode())
    assert without_created(ours.render()) == without_created(generate_latest(registry).decode())


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from(["x", "y", "z"]), st.floats(0, 100)), max_size=8), max_size=6))
def test_cached_series_text_follows_every_observation_between_scrapes(rounds):
    """A scrape re-renders only what changed; whatever the interleaving, it shows every observation."""
    registry = CollectorRegistry()
    reference = Histogram("h_seconds", "Doc", ("a",), buckets=TTFT_BUCKETS_S, registry=registry)
    ours = SeriesHistogram("h_seconds", "Doc", ("a",), TTFT_BUCKETS_S)
    for observations in rounds:
        for label, value in observations:
            reference.labels(label).observe(value)
            ours.observe((label,), value)
        assert families(ours.render()) == families(generate_latest(registry).decode())


def test_a_big_family_comes_in_bounded_chunks():
    ours = SeriesHistogram("h_seconds", "Doc", ("target",), TTFT_BUCKETS_S)
    for i in range(2000):
        ours.observe((f"target-{i}",), 0.3)
    chunks = list(ours.chunks())
    largest_piece = 4096  # one series' text is ~2.5 KB: a chunk ends at most one piece past the bound
    assert len(chunks) > 10 and max(map(len, chunks)) < CHUNK_BYTES + largest_piece
    assert b"".join(chunks).count(b"h_seconds_count{") == 2000


def test_an_empty_family_renders_its_header_only():
    assert SeriesHistogram("h_seconds", "Doc", ("a",), TTFT_BUCKETS_S).render() == (
        "# HELP h_seconds Doc\n# TYPE h_seconds histogram\n"
    )
    assert SeriesCounter("c", "Doc", ("a",)).render() == "# HELP c_total Doc\n# TYPE c_total counter\n"


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
    assert {"firsttoken_target_ttft_seconds", "firsttoken_target_decode_tokens_per_second"} <= names
    # Histograms per provider region (20 pairs here), not per target; a target gets its recent percentiles.
    assert body.count(b"firsttoken_ttft_seconds_bucket{") == 20 * (len(TTFT_BUCKETS_S) + 1)
    assert body.count(b"firsttoken_target_ttft_seconds{") == 1000 * 3
    assert len(body) / 1000 < 2048  # at most 2 KB a target (issue 22; 12.5 KB before)
    assert elapsed < 0.8, elapsed
    assert len(LABELS) == 5


def test_probe_cost_is_a_counter_per_provider_and_model():
    metrics = ProbeMetrics()
    now = datetime.now(UTC)

    def sample(ok: bool, cost: float | None, error_kind: str | None = None) -> Sample:
        return Sample(
            target="p/m@r:q", provider="p", model="m", region="r", prompt="q", started_at=now, ok=ok,
            error_kind=error_kind, cost_usd=cost, agent="a",
        )  # fmt: skip

    metrics.observe(sample(True, 0.0125))
    metrics.observe(sample(False, 0.0025, "assertion"))  # a failed check still paid for its tokens
    metrics.observe(sample(False, None, "server_error"))
    text = metrics.exposition().decode()
    assert 'firsttoken_probe_cost_usd_total{model="m",provider="p"} 0.015' in text
    assert 'error_kind="assertion"' in text  # counted among the failures, by kind
