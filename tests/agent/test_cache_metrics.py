"""Cache probes in /metrics and OpenTelemetry (DESIGN §13): warm TTFT apart, hits counted,
prompt-cache tokens as the responses stated them."""

from __future__ import annotations

from datetime import UTC, datetime

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from prometheus_client.parser import text_string_to_metric_families

from monitor.agent.metrics import ProbeMetrics
from monitor.agent.otel import CACHE_CREATION, CACHE_READ, OtelMetrics
from monitor.sample import Sample

NOW = datetime.now(UTC)


def sample(state: str | None, ttft_ms: float, read: int | None, write: int | None = None, hit=None, **kw) -> Sample:
    return Sample(
        target="p/m@r:doc", provider="p", model="m", region="r", prompt="doc", started_at=NOW, ok=True,
        ttft_ms=ttft_ms, total_ms=ttft_ms + 50, cache_state=state, cache_read_tokens=read, cache_write_tokens=write,
        cache_hit=hit, agent="a", **kw,
    )  # fmt: skip


def test_warm_ttft_hits_and_cache_tokens_in_metrics():
    metrics = ProbeMetrics()
    metrics.observe(sample("cold", 900.0, 0, 1200))
    metrics.observe(sample("warm", 120.0, 1200, 0, hit=True))
    metrics.observe(sample("cold", 910.0, 0, 1200))
    metrics.observe(sample("warm", 880.0, 0, 1200, hit=False))
    metrics.observe(sample(None, 400.0, None))  # a probe that is not a cache probe
    families = {f.name: f for f in text_string_to_metric_families(metrics.exposition().decode())}

    def value(family: str, suffix: str, **labels) -> float:
        return next(
            s.value
            for s in families[family].samples
            if s.name == family + suffix and all(s.labels.get(k) == v for k, v in labels.items())
        )

    # firsttoken_ttft_seconds keeps the cold half and the plain probe; the warm half has its own.
    assert value("firsttoken_ttft_seconds", "_count") == 3
    assert value("firsttoken_warm_ttft_seconds", "_count") == 2
    assert value("firsttoken_warm_ttft_seconds", "_sum") == (120.0 + 880.0) / 1000
    assert value("firsttoken_cache_probes", "_total", hit="true") == 1
    assert value("firsttoken_cache_probes", "_total", hit="false") == 1
    assert value("firsttoken_cache_tokens", "_total", kind="read") == 1200
    assert value("firsttoken_cache_tokens", "_total", kind="write") == 3 * 1200


def test_otel_records_cache_usage_under_the_conventions_names():
    reader = InMemoryMetricReader()
    otel = OtelMetrics({}, [], provider=MeterProvider(metric_readers=[reader]))
    otel.observe(sample("cold", 900.0, 0, 1200, input_tokens=1250, output_tokens=8))
    otel.observe(sample("warm", 120.0, 1200, 0, input_tokens=1250, output_tokens=8))
    otel.observe(sample(None, 400.0, None, input_tokens=20, output_tokens=8))  # states nothing: not recorded
    data = reader.get_metrics_data()
    metrics = {m.name: m for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}
    read = {p.attributes["firsttoken.cache_state"]: (p.count, p.sum) for p in metrics[CACHE_READ].data.data_points}
    assert read == {"cold": (1, 0), "warm": (1, 1200)}
    assert metrics[CACHE_READ].unit == "{token}"
    write = {p.attributes["firsttoken.cache_state"]: p.sum for p in metrics[CACHE_CREATION].data.data_points}
    assert write == {"cold": 1200, "warm": 0}
    ttfc = metrics["gen_ai.client.operation.time_to_first_chunk"].data.data_points
    assert {p.attributes.get("firsttoken.cache_state") for p in ttfc} == {"cold", "warm", None}
