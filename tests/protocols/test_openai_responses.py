from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.protocols import get_protocol
from monitor.protocols.base import Message, ProbeRequest

from .recorded import assert_robust, cut, json_values, replay_stamped, text_by_kind

PROTOCOL = get_protocol("openai-responses")


def event(payload: dict, named: bool = True) -> bytes:
    head = f"event: {payload['type']}\n" if named else ""
    return f"{head}data: {json.dumps(payload)}\n\n".encode()


CREATED = event({"type": "response.created", "response": {"model": "gpt-5-2025-08-07", "status": "in_progress"}})
USAGE = {
    "input_tokens": 20,
    "input_tokens_details": {"cached_tokens": 16},
    "output_tokens": 12,
    "output_tokens_details": {"reasoning_tokens": 8},
}


def delta(kind: str, text: str) -> bytes:
    return event({"type": f"response.{kind}.delta", "delta": text})


def completed(status: str = "completed", **extra) -> bytes:
    return event({"type": f"response.{status}", "response": {"status": status, "usage": USAGE, **extra}})


def test_request():
    req = ProbeRequest(
        base_url="https://api.openai.com/v1/",
        model="gpt-5",
        messages=(Message("system", "Be brief."), Message("user", "TTFT?")),
        max_tokens=64,
        api_key="sk-secret",
        params={"reasoning": {"effort": "low"}},
    )
    http = PROTOCOL.build_request(req)
    assert (http.method, http.url) == ("POST", "https://api.openai.com/v1/responses")
    assert http.headers["authorization"] == "Bearer sk-secret"
    assert json.loads(http.body) == {
        "model": "gpt-5",
        "input": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "TTFT?"}],
        "max_output_tokens": 64,
        "stream": True,
        "reasoning": {"effort": "low"},
    }
    assert PROTOCOL.error_message(400, b'{"error": {"message": "bad model", "type": "invalid_request_error"}}') == (
        "HTTP 400: bad model"
    )


def test_reasoning_then_answer_then_completed():
    reads = [
        CREATED,
        event({"type": "response.output_item.added", "item": {"type": "reasoning", "encrypted_content": "gAAA"}}),
        delta("reasoning_summary_text", "**Plan**"),
        delta("reasoning_text", " think"),
        delta("output_text", ""),
        delta("output_text", "Hello"),
        completed(),
    ]
    result = replay_stamped(PROTOCOL, reads)
    m = result.metrics
    assert result.ok
    assert (m.ttft_ms, m.ttft_answer_ms, m.total_ms) == (2, 5, 6)
    assert (m.output_tokens, m.reasoning_tokens, m.input_tokens, m.cache_read_tokens) == (12, 8, 20, 16)
    assert m.model_version == "gpt-5-2025-08-07"
    assert text_by_kind(PROTOCOL, reads) == {"reasoning": "**Plan** think", "answer": "Hello"}


def test_function_call_name_and_arguments_are_tool_tokens():
    added = event({"type": "response.output_item.added", "item": {"type": "function_call", "name": "get_capital"}})
    reads = [CREATED, added, delta("function_call_arguments", '{"c":1}'), completed()]
    assert replay_stamped(PROTOCOL, reads).metrics.ttft_ms == 1
    assert text_by_kind(PROTOCOL, reads) == {"tool": 'get_capital{"c":1}'}


def test_refusal_is_answer_text():
    assert text_by_kind(PROTOCOL, [CREATED, delta("refusal", "I can't"), completed()]) == {"answer": "I can't"}


def test_incomplete_is_a_finish_with_its_reason():
    reads = [
        CREATED,
        delta("output_text", "Hi"),
        completed("incomplete", incomplete_details={"reason": "max_output_tokens"}),
    ]
    result = replay_stamped(PROTOCOL, reads)
    assert result.ok and result.metrics.total_ms == 2 and result.metrics.output_tokens == 12


def test_data_only_stream_with_comments_and_done():
    reads = [
        b": OPENROUTER PROCESSING\n\n",
        event({"type": "response.created", "response": {"model": "openai/gpt-oss-20b"}}, named=False),
        event({"type": "response.output_text.delta", "delta": "4"}, named=False),
        event({"type": "response.completed", "response": {"status": "completed", "usage": USAGE}}, named=False),
        b"data: [DONE]\n\n",
        event({"type": "response.output_text.delta", "delta": "ignored"}, named=False),
    ]
    result = replay_stamped(PROTOCOL, reads)
    assert result.ok
    assert (result.metrics.ttft_ms, result.metrics.total_ms, result.metrics.chunks) == (2, 3, 1)


@pytest.mark.parametrize(
    ("reads", "kind", "message"),
    [
        (
            [
                CREATED,
                delta("output_text", "Hi"),
                event(
                    {
                        "type": "response.failed",
                        "response": {"status": "failed", "error": {"code": "server_error", "message": "boom"}},
                    }
                ),
            ],
            "stream_error",
            "server_error: boom",
        ),
        (
            [CREATED, event({"type": "error", "code": "internal_error", "message": "oops", "param": None})],
            "stream_error",
            "internal_error: oops",
        ),
        (
            [
                CREATED,
                event(
                    {
                        "type": "error",
                        "error": {"type": "server_error", "code": "rate_limit_exceeded", "message": "slow"},
                    }
                ),
            ],
            "rate_limited",
            "rate_limit_exceeded: slow",
        ),
    ],
    ids=["failed", "error-event", "rate-limit"],
)
def test_failures_after_http_200(reads, kind, message):
    result = replay_stamped(PROTOCOL, reads)
    assert (str(result.error_kind), result.error_message) == (kind, message)


@pytest.mark.parametrize(
    ("reads", "kind"),
    [
        ([], "truncated"),
        ([CREATED], "truncated"),
        ([CREATED, delta("output_text", "Hi"), b"data: [DONE]\n\n"], "truncated"),  # no response.completed
        ([CREATED, delta("output_text", "Hi"), completed()[:50]], "truncated"),
        ([CREATED, event({"type": "response.completed", "response": {"usage": {"output_tokens": 0}}})], "empty"),
        ([CREATED, b"data: {nope\n\n"], "protocol"),
        ([CREATED, b"data: \xc3\x28\n\n"], "protocol"),
    ],
    ids=["no-body", "created-only", "done-without-completed", "cut-mid-event", "no-token", "bad-json", "bad-utf8"],
)
def test_empty_truncated_and_malformed_streams(reads, kind):
    assert str(replay_stamped(PROTOCOL, reads).error_kind) == kind


VOCABULARY = [
    "type",
    "delta",
    "response",
    "usage",
    "model",
    "status",
    "item",
    "name",
    "error",
    "code",
    "message",
    "incomplete_details",
    "reason",
    "input_tokens",
    "output_tokens",
    "output_tokens_details",
    "reasoning_tokens",
    "input_tokens_details",
    "cached_tokens",
    "function_call",
    "response.created",
    "response.completed",
    "response.incomplete",
    "response.failed",
    "response.output_text.delta",
    "response.reasoning_text.delta",
    "response.output_item.added",
    "response.function_call_arguments.delta",
    "error",
]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.lists(st.integers(0, 10**6), max_size=6))
def test_random_bytes_never_raise(data, points):
    assert_robust(PROTOCOL, cut(data, points))


@settings(max_examples=200, deadline=None)
@given(st.lists(json_values(VOCABULARY), max_size=8), st.lists(st.integers(0, 10**6), max_size=6))
def test_wrongly_typed_events_never_raise(events, points):
    raw = b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events)
    assert_robust(PROTOCOL, cut(raw, points))
