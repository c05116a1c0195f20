"""Turn timestamped protocol events into the metrics of DESIGN §1. Pure.

The probe stamps every raw read with `perf_counter_ns()` and passes the
events parsed from it here with that stamp; nothing in this module reads a
clock, so recorded streams replay to exactly the numbers a live probe gets.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from monitor.probe.tokens import ENCODE_CHARS, estimate_tokens
from monitor.protocols.base import (
    Event,
    Finished,
    ResponseInfo,
    StreamFailure,
    TokenDelta,
    TokenKind,
    ToolCallDelta,
    UsageReport,
)
from monitor.sample import SAMPLE_FIELDS, ErrorKind, TokensSource

NS_PER_MS = 1_000_000
# The estimate encodes only this much text and scales by the full length (monitor.probe.tokens),
# so keeping more would only cost memory; a runaway stream cannot grow it.
MAX_TEXT_CHARS = ENCODE_CHARS
MAX_GAPS = 100_000
# The answer kept for `expect:` checks and the answer fingerprint. A probe's answer is a few
# hundred characters; past this a check sees a prefix (max_chars still counts every character),
# so a runaway stream cannot grow memory. Tool calls are bounded the same way, in all.
MAX_ANSWER_CHARS = 64_000
MAX_TOOL_CALLS = 16
_ANSWER = TokenKind.ANSWER  # an enum attribute lookup costs ~0.1 µs, per token: looked up once here


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One assembled tool call: the function's name and its arguments as streamed (JSON text)."""

    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class Answer:
    """What the model said, for the checks: visible text (kept up to MAX_ANSWER_CHARS of
    `chars`) and its tool calls in index order."""

    text: str
    chars: int
    tool_calls: tuple[ToolCall, ...]

    @property
    def complete(self) -> bool:
        return len(self.text) == self.chars


@dataclass(frozen=True, slots=True)
class StreamMetrics:
    """What one response stream measured; the probe adds request-level fields."""

    ttft_ms: float | None
    ttft_answer_ms: float | None
    total_ms: float | None
    output_tokens: int | None
    tokens_source: str | None
    input_tokens: int | None
    reasoning_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    tps: float | None
    chunks: int
    itl_p50_ms: float | None
    itl_max_ms: float | None
    model_version: str | None
    server_timing: dict[str, Any] | None
    served_by: str | None  # as the stream named it; headers add theirs in the probe
    system_fingerprint: str | None
    # The provider's id as the body names it (request_ids.py); the probe prefers its header.
    request_id: str | None
    finished: bool
    failure: StreamFailure | None

    def sample_fields(self) -> dict[str, Any]:
        """The fields a Sample shares with these metrics: one conversion, so a new metric cannot be forgotten."""
        return {name: getattr(self, name) for name in _SHARED_WITH_SAMPLE}


_SHARED_WITH_SAMPLE = tuple(f.name for f in dataclasses.fields(StreamMetrics) if f.name in SAMPLE_FIELDS)


class StreamMeasurement:
    """Accumulates events of one stream; `metrics()` summarises them."""

    def __init__(self, t0_ns: int, keep_answer: bool = True) -> None:
        """`keep_answer`: keep the answer text and tool calls (for `answer()`); a probe without
        checks or fingerprint skips it, so its per-token work is what it was."""
        self.t0_ns = t0_ns
        self._keep_answer = keep_answer
        self.first_token_ns: int | None = None
        self.first_answer_ns: int | None = None
        self.last_token_ns: int | None = None
        self.finished_ns: int | None = None
        self.failure: StreamFailure | None = None
        self.chunks = 0
        self._gaps_ns: list[int] = []
        self._text: list[str] = []
        self._text_chars = 0
        self._answer: list[str] = []
        self._answer_chars = 0
        self._tools: dict[int, list[str]] = {}  # call index -> [name, arguments fragments...]
        self._tool_chars = 0
        self._usage = UsageReport()
        self._model_version: str | None = None
        self._server_timing: dict[str, Any] = {}
        self._served_by: str | None = None
        self._system_fingerprint: str | None = None
        self._response_id: str | None = None
        self._request_id: str | None = None

    @property
    def finished(self) -> bool:
        return self.finished_ns is not None

    def add(self, t_ns: int, events: Iterable[Event]) -> None:
        for event in events:
            if isinstance(event, TokenDelta):
                self._on_token(t_ns, event)
            elif isinstance(event, UsageReport):
                self._usage = _merge_usage(self._usage, event)
            elif isinstance(event, Finished):
                if self.finished_ns is None:
                    self.finished_ns = t_ns
            elif isinstance(event, StreamFailure):
                if self.failure is None:
                    self.failure = event
            elif isinstance(event, ResponseInfo):
                if event.model_version and not self._model_version:
                    self._model_version = event.model_version
                if event.server_timing:
                    self._server_timing.update(event.server_timing)
                if event.served_by and not self._served_by:
                    self._served_by = event.served_by
                if event.system_fingerprint and not self._system_fingerprint:
                    self._system_fingerprint = event.system_fingerprint
                if event.response_id and not self._response_id:
                    self._response_id = event.response_id
                if event.request_id and not self._request_id:
                    self._request_id = event.request_id

    def _on_token(self, t_ns: int, token: TokenDelta) -> None:
        if not token.text:
            return
        if self.first_token_ns is None:
            self.first_token_ns = t_ns
        elif self.last_token_ns is not None and len(self._gaps_ns) < MAX_GAPS:
            self._gaps_ns.append(t_ns - self.last_token_ns)
        # "Visible" answer text: whitespace-only deltas (Claude's leading
        # "\n\n") are output tokens for ttft_ms but show the user nothing.
        if self.first_answer_ns is None and token.kind is TokenKind.ANSWER and not token.text.isspace():
            self.first_answer_ns = t_ns
        self.last_token_ns = t_ns
        self.chunks += 1
        text = token.text
        if self._text_chars < MAX_TEXT_CHARS:  # cut a single huge delta too: memory stays bounded
            self._text.append(text[: MAX_TEXT_CHARS - self._text_chars])
        self._text_chars += len(text)
        if not self._keep_answer:
            return
        if token.kind is _ANSWER:
            if self._answer_chars < MAX_ANSWER_CHARS:
                self._answer.append(text[: MAX_ANSWER_CHARS - self._answer_chars])
            self._answer_chars += len(text)
        elif type(token) is ToolCallDelta:
            self._on_tool(token)

    def _on_tool(self, token: ToolCallDelta) -> None:
        parts = self._tools.get(token.index)
        if parts is None:
            if len(self._tools) >= MAX_TOOL_CALLS:
                return
            parts = self._tools[token.index] = [""]
        if token.name and not parts[0]:
            parts[0] = token.name
        if token.arguments and self._tool_chars < MAX_ANSWER_CHARS:
            parts.append(token.arguments[: MAX_ANSWER_CHARS - self._tool_chars])
            self._tool_chars += len(token.arguments)

    def answer(self) -> Answer:
        calls = tuple(ToolCall(p[0], "".join(p[1:])) for _, p in sorted(self._tools.items()))
        return Answer("".join(self._answer), self._answer_chars, calls)

    def metrics(self, end_ns: int | None = None) -> StreamMetrics:
        usage = self._usage
        if usage.output_tokens is not None:
            output_tokens, source = usage.output_tokens, TokensSource.USAGE
        elif self.chunks:
            output_tokens, source = estimate_tokens("".join(self._text), self._text_chars), TokensSource.ESTIMATE
        else:
            output_tokens, source = 0, TokensSource.ESTIMATE
        terminal_ns = self.finished_ns if self.finished_ns is not None else end_ns
        return StreamMetrics(
            ttft_ms=self._ms(self.first_token_ns),
            ttft_answer_ms=self._ms(self.first_answer_ns),
            total_ms=self._ms(terminal_ns),
            output_tokens=output_tokens,
            tokens_source=str(source),
            input_tokens=usage.input_tokens,
            reasoning_tokens=usage.reasoning_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            tps=decode_tps(output_tokens, self.first_token_ns, self.last_token_ns),
            chunks=self.chunks,
            itl_p50_ms=statistics.median(self._gaps_ns) / NS_PER_MS if self._gaps_ns else None,
            itl_max_ms=max(self._gaps_ns) / NS_PER_MS if self._gaps_ns else None,
            model_version=self._model_version,
            server_timing=dict(self._server_timing) or None,
            served_by=self._served_by,
            system_fingerprint=self._system_fingerprint,
            # A request id the body states outright beats the response's own id.
            request_id=self._request_id or self._response_id,
            finished=self.finished,
            failure=self.failure,
        )

    def outcome(self) -> tuple[ErrorKind | None, str | None]:
        """The stream's own verdict, after the body ended normally."""
        if self.failure is not None:
            return self.failure.error_kind, self.failure.message
        if not self.finished:
            return ErrorKind.TRUNCATED, "stream ended before its terminal event"
        if self.first_token_ns is None and not self._usage.output_tokens:
            return ErrorKind.EMPTY, "stream finished without an output token"
        return None, None

    def _ms(self, t_ns: int | None) -> float | None:
        return None if t_ns is None else (t_ns - self.t0_ns) / NS_PER_MS


def decode_tps(output_tokens: int | None, first_ns: int | None, last_ns: int | None) -> float | None:
    """Decode speed, TTFT excluded: (n - 1) tokens over first→last token time."""
    if output_tokens is None or output_tokens < 2 or first_ns is None or last_ns is None:
        return None
    span_ns = last_ns - first_ns
    if span_ns <= 0:
        return None
    return (output_tokens - 1) * 1e9 / span_ns


def _merge_usage(old: UsageReport, new: UsageReport) -> UsageReport:
    # Cumulative semantics: a later report replaces, field by field.
    return UsageReport(
        output_tokens=new.output_tokens if new.output_tokens is not None else old.output_tokens,
        input_tokens=new.input_tokens if new.input_tokens is not None else old.input_tokens,
        reasoning_tokens=new.reasoning_tokens if new.reasoning_tokens is not None else old.reasoning_tokens,
        cache_read_tokens=new.cache_read_tokens if new.cache_read_tokens is not None else old.cache_read_tokens,
        cache_write_tokens=new.cache_write_tokens if new.cache_write_tokens is not None else old.cache_write_tokens,
    )
