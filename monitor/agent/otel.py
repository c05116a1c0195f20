"""OpenTelemetry metrics: every sample as the GenAI semantic conventions' client histograms.

Optional (`pip install 'firsttoken[otel]'`) and off unless the standard
`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` is set.
The SDK itself reads the rest of the standard environment: the OTLP/HTTP
exporter its endpoint, headers and timeout, the periodic reader
`OTEL_METRIC_EXPORT_INTERVAL`, the resource `OTEL_RESOURCE_ATTRIBUTES` and
`OTEL_SERVICE_NAME` (default here: firsttoken).

Names follow the last published release of the conventions (semantic-conventions
v1.41.0: `gen_ai.client.operation.*`, `gen_ai.client.token.usage`). As the
conventions ask of existing instrumentations, the newer development names
(`gen_ai.client.inference.*`, token usage as counters plus per-operation
histograms) are emitted instead when `OTEL_SEMCONV_STABILITY_OPT_IN` lists
`gen_ai_latest_experimental`.

A probe measures one whole streamed call, so each sample gives: the duration
(`total_ms`, errors included with `error.type`), the time to first chunk
(`ttft_ms`), and the time per output chunk as the decode time spread evenly
over the chunks after the first (we keep no per-chunk times: count and sum are
exact, the spread within one call is not).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from monitor.sample import Sample

log = logging.getLogger(__name__)

# Explicit bucket boundaries the conventions advise (seconds; tokens).
DURATION_BUCKETS_S = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864)
OPT_IN_LATEST = "gen_ai_latest_experimental"
CACHE_READ = "gen_ai.usage.cache_read.input_tokens"
CACHE_CREATION = "gen_ai.usage.cache_creation.input_tokens"
ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


@dataclass(frozen=True, slots=True)
class Names:
    duration: str
    ttfc: str
    tpoc: str
    token_usage: str | None  # v1.41: one histogram split by gen_ai.token.type
    input_tokens: str | None = None  # latest: per-operation histograms ...
    output_tokens: str | None = None
    input_total: str | None = None  # ... and running counters
    output_total: str | None = None


V1_41 = Names(
    "gen_ai.client.operation.duration",
    "gen_ai.client.operation.time_to_first_chunk",
    "gen_ai.client.operation.time_per_output_chunk",
    "gen_ai.client.token.usage",
)
LATEST = Names(
    "gen_ai.client.inference.duration",
    "gen_ai.client.inference.time_to_first_chunk",
    "gen_ai.client.inference.time_per_output_chunk",
    None,
    "gen_ai.client.inference.operation.input_tokens",
    "gen_ai.client.inference.operation.output_tokens",
    "gen_ai.client.inference.usage.input_tokens",
    "gen_ai.client.inference.usage.output_tokens",
)


def names_for(environ: Mapping[str, str]) -> Names:
    opt_in = {v.strip() for v in environ.get("OTEL_SEMCONV_STABILITY_OPT_IN", "").split(",")}
    return LATEST if OPT_IN_LATEST in opt_in else V1_41


def enabled(environ: Mapping[str, str]) -> bool:
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return any(environ.get(v, "").strip() for v in ENDPOINT_VARS)


@dataclass(frozen=True, slots=True)
class TargetInfo:
    """What a sample does not carry: from the target's config."""

    provider_name: str
    operation: str
    server_address: str | None
    server_port: int | None


def target_info(targets: Iterable[Any]) -> dict[str, TargetInfo]:
    from monitor.protocols import get_protocol

    out = {}
    for t in targets:
        protocol = get_protocol(t.protocol)
        parts = urlsplit(t.base_url)
        port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
        out[t.id] = TargetInfo(protocol.genai_provider, protocol.genai_operation, parts.hostname, port)
    return out


def attributes(sample: Sample, info: TargetInfo | None) -> dict[str, Any]:
    """The conventions' attributes of one sample, plus firsttoken.* for our own dimensions."""
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": info.operation if info else "chat",
        "gen_ai.provider.name": info.provider_name if info else "_OTHER",
        "gen_ai.request.model": sample.model,
        "firsttoken.provider": sample.provider,
        "firsttoken.region": sample.region,
        "firsttoken.prompt": sample.prompt,
        "firsttoken.agent": sample.agent,
    }
    if sample.model_version:
        attrs["gen_ai.response.model"] = sample.model_version
    if info and info.server_address:
        attrs["server.address"] = info.server_address
        if info.server_port:
            attrs["server.port"] = info.server_port
    if not sample.ok:
        attrs["error.type"] = sample.error_kind or "_OTHER"
    if sample.cache_state:  # a cache probe's half (DESIGN §13): cold and warm TTFT split on it
        attrs["firsttoken.cache_state"] = sample.cache_state
    return attrs


class OtelMetrics:
    """Records samples into an SDK MeterProvider that exports over OTLP/HTTP."""

    def __init__(self, environ: Mapping[str, str], targets: Iterable[Any], provider: Any = None) -> None:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource

        from monitor import __version__

        self.names = names_for(environ)
        if provider is None:
            # Resource.create merges OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME over these defaults.
            resource = Resource.create({SERVICE_NAME: environ.get("OTEL_SERVICE_NAME") or "firsttoken"})
            reader = PeriodicExportingMetricReader(OTLPMetricExporter())  # both read the OTEL_* environment
            provider = MeterProvider(metric_readers=[reader], resource=resource)
        self.provider = provider
        meter = provider.get_meter("firsttoken", __version__)
        n = self.names
        seconds = {"unit": "s", "explicit_bucket_boundaries_advisory": DURATION_BUCKETS_S}
        tokens = {"unit": "{token}", "explicit_bucket_boundaries_advisory": TOKEN_BUCKETS}
        self.duration = meter.create_histogram(n.duration, description="GenAI operation duration.", **seconds)
        self.ttfc = meter.create_histogram(n.ttfc, description="Time to receive the first chunk.", **seconds)
        self.tpoc = meter.create_histogram(n.tpoc, description="Time per output chunk after the first.", **seconds)
        if n.token_usage:
            self.usage = meter.create_histogram(
                n.token_usage, description="Number of input and output tokens used.", **tokens
            )
        else:
            self.input_h = meter.create_histogram(n.input_tokens, description="Input tokens per operation.", **tokens)
            self.output_h = meter.create_histogram(
                n.output_tokens, description="Output tokens per operation.", **tokens
            )
            self.input_c = meter.create_counter(n.input_total, unit="{token}", description="Input tokens used.")
            self.output_c = meter.create_counter(n.output_total, unit="{token}", description="Output tokens used.")
        # The conventions name prompt-cache usage `gen_ai.usage.cache_read.input_tokens` and
        # `gen_ai.usage.cache_creation.input_tokens` (span attributes; no metric yet): one histogram
        # each under those names, recorded when the response states the count.
        self.cache_read = meter.create_histogram(
            CACHE_READ, description="Input tokens read from the provider's prompt cache.", **tokens
        )
        self.cache_write = meter.create_histogram(
            CACHE_CREATION, description="Input tokens written to the provider's prompt cache.", **tokens
        )
        self.targets: dict[str, TargetInfo] = target_info(targets)

    def set_targets(self, targets: Iterable[Any]) -> None:
        self.targets = target_info(targets)

    def observe(self, sample: Sample) -> None:
        if sample.error_kind == "cancelled":
            return  # our own shutdown, not the provider's doing
        attrs = attributes(sample, self.targets.get(sample.target))
        if sample.total_ms is not None:
            self.duration.record(sample.total_ms / 1000, attrs)
        if not sample.ok:
            return
        if sample.ttft_ms is not None:
            self.ttfc.record(sample.ttft_ms / 1000, attrs)
            if sample.total_ms is not None and sample.chunks > 1:
                per_chunk_s = max(0.0, sample.total_ms - sample.ttft_ms) / 1000 / (sample.chunks - 1)
                for _ in range(sample.chunks - 1):
                    self.tpoc.record(per_chunk_s, attrs)
        self._tokens(sample, attrs)

    def _tokens(self, sample: Sample, attrs: dict[str, Any]) -> None:
        if sample.cache_read_tokens is not None:
            self.cache_read.record(sample.cache_read_tokens, attrs)
        if sample.cache_write_tokens is not None:
            self.cache_write.record(sample.cache_write_tokens, attrs)
        for kind, count in (("input", sample.input_tokens), ("output", sample.output_tokens)):
            if count is None:
                continue
            if self.names.token_usage:
                self.usage.record(count, {**attrs, "gen_ai.token.type": kind})
            elif kind == "input":
                self.input_h.record(count, attrs)
                self.input_c.add(count, attrs)
            else:
                self.output_h.record(count, attrs)
                self.output_c.add(count, attrs)

    def shutdown(self) -> None:
        """Export what is left and stop the reader (on SIGTERM, after the last samples)."""
        try:
            self.provider.shutdown()
        except Exception as exc:  # the collector may be gone; never fail a clean stop over it
            log.warning("OpenTelemetry shutdown: %s", type(exc).__name__)


def from_environment(targets: Iterable[Any], environ: Mapping[str, str] | None = None) -> OtelMetrics | None:
    """The exporter when the OTEL_* environment asks for one; None (and a log line) otherwise."""
    environ = os.environ if environ is None else environ
    if not enabled(environ):
        return None
    try:
        metrics = OtelMetrics(environ, targets)
    except ImportError:
        log.error(
            "OTEL_EXPORTER_OTLP_ENDPOINT is set but OpenTelemetry is not installed: pip install 'firsttoken[otel]'"
        )
        return None
    log.info("OpenTelemetry metrics on: %s names, OTLP/HTTP", "latest" if metrics.names is LATEST else "v1.41.0")
    return metrics
