"""The one value every probe produces: a Sample (DESIGN §1).

A Sample is what gets printed by `probe --json`, written to the database,
spooled to disk and fed to alerting, so it is a frozen, flat value with
JSON-friendly fields. Units are in the names.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, TextIO


class ErrorKind(StrEnum):
    TIMEOUT = "timeout"
    CONNECT = "connect"
    AUTH = "auth"
    RATE_LIMITED = "rate_limited"
    CLIENT_ERROR = "client_error"
    SERVER_ERROR = "server_error"
    STREAM_ERROR = "stream_error"
    PROTOCOL = "protocol"
    TRUNCATED = "truncated"
    EMPTY = "empty"
    ASSERTION = "assertion"  # the answer failed the prompt's `expect:` checks
    # Not a provider fault: the service stopped while the probe was in flight.
    CANCELLED = "cancelled"


class TokensSource(StrEnum):
    USAGE = "usage"
    ESTIMATE = "estimate"


def target_id(provider: str | None, model: str | None, region: str | None, prompt: str | None) -> str:
    """The one spelling of a target's id, `provider/model@region:prompt` (DESIGN §3)."""
    return f"{provider}/{model}@{region}:{prompt}"


@dataclass(frozen=True, slots=True)
class TargetKey:
    """Identity of one matrix cell: `provider/model@region:prompt`."""

    provider: str
    model: str
    region: str
    prompt: str

    @property
    def id(self) -> str:
        return target_id(self.provider, self.model, self.region, self.prompt)


# The older name of `cache_read_tokens` (before migration 0013). Not a field: JSON and CSV outputs
# still carry it, beside `cache_read_tokens` and always equal to it, because they promised it.
LEGACY_CACHE_READ = "cached_input_tokens"


@dataclass(frozen=True, slots=True)
class Sample:
    target: str
    provider: str
    model: str
    region: str
    prompt: str
    started_at: datetime
    ok: bool
    error_kind: str | None = None
    error_message: str | None = None
    ttfb_ms: float | None = None
    ttft_ms: float | None = None
    ttft_answer_ms: float | None = None
    total_ms: float | None = None
    output_tokens: int | None = None
    tokens_source: str | None = None
    input_tokens: int | None = None
    reasoning_tokens: int | None = None
    # Prompt caching (DESIGN §13): tokens read from / written to the provider's prompt cache as the
    # response states them (null: it says nothing), and which half of a cache probe's pair this is.
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    cache_state: str | None = None  # cold | warm; null for a probe that is not a cache probe
    # A warm probe's verdict: it read from the cache (cache_read_tokens > 0), or, where the
    # response states nothing, its TTFT saving on the round's cold probe is evident. Else null.
    cache_hit: bool | None = None
    tps: float | None = None
    chunks: int = 0
    itl_p50_ms: float | None = None
    itl_max_ms: float | None = None
    dns_ms: float | None = None
    connect_ms: float | None = None
    tls_ms: float | None = None
    connection_reused: bool | None = None
    http_status: int | None = None
    request_id: str | None = None
    model_version: str | None = None
    server_timing: dict[str, Any] | None = None
    sched_lag_ms: float | None = None
    queue_wait_ms: float | None = None  # waiting for a concurrency cap, apart from sched_lag_ms
    # Route truth (DESIGN §10): what the response itself says about who served it.
    served_by: str | None = None
    system_fingerprint: str | None = None
    fallback: bool | None = None  # None: the response says nothing either way
    ratelimit_remaining_requests: int | None = None
    ratelimit_remaining_tokens: int | None = None
    cost_usd: float | None = None
    answer_fingerprint: str | None = None  # temperature-0 prompts: a normalised hash of the answer
    failed_check: str | None = None  # the `expect:` check that failed (error_kind assertion)
    # The egress proxy's origin (no credentials) when the probe went through one: dns_ms and
    # connect_ms are then the proxy's, tls_ms the provider's handshake inside the CONNECT tunnel.
    via_proxy: str | None = None
    # True: an extra probe the leader asked for because another vantage point began to see this target
    # degrade (DESIGN §11), so a quorum need not wait for the next scheduled round.
    confirmation: bool | None = None
    agent: str = "local"
    # Idempotency key: the writer and the spool replay use it so that a
    # sample is never stored twice.
    id: str = field(default_factory=lambda: uuid.uuid4().hex)

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["started_at"] = self.started_at.astimezone(UTC).isoformat()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Sample:
        names = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in names}
        # A spool written before migration 0013 may hold the figure under its older name only.
        if values.get("cache_read_tokens") is None and data.get(LEGACY_CACHE_READ) is not None:
            values["cache_read_tokens"] = data[LEGACY_CACHE_READ]
        started = values["started_at"]
        if isinstance(started, str):
            started = datetime.fromisoformat(started)
        if started.tzinfo is None:
            started = started.replace(tzinfo=UTC)
        values["started_at"] = started
        return cls(**values)


SAMPLE_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Sample))
# What `probe --json` and `samples --json/--csv` print: every field, and the older name of
# `cache_read_tokens` just before it (an alias in these outputs only; see LEGACY_CACHE_READ).
OUTPUT_FIELDS: tuple[str, ...] = tuple(
    name for f in SAMPLE_FIELDS for name in ((LEGACY_CACHE_READ, f) if f == "cache_read_tokens" else (f,))
)

# The metric names, once: the per-sample numbers that percentiles, rollups and detectors use,
# the alertable ones (error_rate is derived from `ok`), and the route-truth values `kind: change` watches.
LATENCY_METRICS: tuple[str, ...] = ("ttft_ms", "ttft_answer_ms", "total_ms")
SAMPLE_METRICS: tuple[str, ...] = (*LATENCY_METRICS, "tps")
ALERT_METRICS: tuple[str, ...] = (*SAMPLE_METRICS, "error_rate")
# Prompt caching (DESIGN §13): the share of a cache probe's warm probes that hit, over a window.
CACHE_ALERT_METRICS: tuple[str, ...] = ("cache_hit_ratio",)
RULE_METRICS: tuple[str, ...] = (*ALERT_METRICS, *CACHE_ALERT_METRICS)  # what a rule's `metric` may name
CHANGE_METRICS: tuple[str, ...] = ("served_by", "model_version", "system_fingerprint", "answer_fingerprint")


def outcome_label(sample: Sample) -> str:
    """`ok`, the error kind, or `assertion:<check>` naming the `expect` check that failed."""
    if sample.ok:
        return "ok"
    if sample.failed_check:
        return f"{sample.error_kind}:{sample.failed_check}"
    return str(sample.error_kind)


def output_dict(sample: Sample) -> dict[str, Any]:
    """A sample as the command line prints it: `to_dict()` with the alias, in OUTPUT_FIELDS order."""
    row = sample.to_dict()
    row[LEGACY_CACHE_READ] = sample.cache_read_tokens
    return {name: row[name] for name in OUTPUT_FIELDS}


# The two spellings of samples on the command line (`probe --json`, `samples --json/--csv`) and
# in the dashboard's download: one place, so they cannot drift apart.
def write_json(samples: Sequence[Sample], out: TextIO, extra: Callable[[Sample], dict] | None = None) -> None:
    """One JSON object a line; `extra(sample)`: fields a reader adds (`samples --json`'s `in_maintenance`)."""
    for sample in samples:
        row = output_dict(sample) if extra is None else output_dict(sample) | extra(sample)
        out.write(json.dumps(row, separators=(",", ":"), default=str) + "\n")


def write_csv(samples: Sequence[Sample], out: TextIO) -> None:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(OUTPUT_FIELDS)
    for sample in samples:
        row = output_dict(sample)
        writer.writerow(_csv_cell(row[name]) for name in OUTPUT_FIELDS)


def _csv_cell(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, bool):  # the JSON spelling, so both outputs read the same
        return "true" if value else "false"
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))
    return value
