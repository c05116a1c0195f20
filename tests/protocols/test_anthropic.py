from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.protocols import get_protocol
from monitor.protocols.base import Message, ProbeRequest, classify_http_status

from .recorded import FIXTURES, assert_robust, cut, json_values, replay_stamped

PROTOCOL = get_protocol("anthropic")


def event(payload: dict, name: str | None = None, pad: str = "   ") -> bytes:
    # Anthropic pads its JSON with spaces before the final brace.
    body = json.dumps(payload, separators=(",", ":"))
    return f"event: {name or payload['type']}\ndata: {body[:-1]}{pad}}}\n\n".encode()


START = event(
    {"type": "message_start", "message": {"model": "claude-x", "usage": {"input_tokens": 7, "output_tokens": 1}}}
)
STOP = event({"type": "message_stop"})


def text(t: str, index: int = 0) -> bytes:
    return event({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": t}})


def thinking(t: str) -> bytes:
    return event({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": t}})


def output(n: int, reason: str = "end_turn") -> bytes:
    return event({"type": "message_delta", "delta": {"stop_reason": reason}, "usage": {"output_tokens": n}})


def request(**kw) -> ProbeRequest:
    base = dict(
        base_url="https://api.anthropic.com",
        model="claude-3-5-haiku-latest",
        messages=(Message("system", "Be brief."), Message("user", "Explain TTFT.")),
        max_tokens=64,
        api_key="sk-ant-secret",
    )
    return ProbeRequest(**(base | kw))


# ------------------------------------------------------------------ request
def test_request_url_headers_and_body():
    http = PROTOCOL.build_request(request(params={"temperature": 0}))
    assert (http.method, http.url) == ("POST", "https://api.anthropic.com/v1/messages")
    assert http.headers["x-api-key"] == "sk-ant-secret"
    assert http.headers["anthropic-version"] == "2023-06-01"
    assert http.headers["content-type"] == "application/json"
    assert "authorization" not in http.headers
    assert json.loads(http.body) == {
        "model": "claude-3-5-haiku-latest",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "Explain TTFT."}],
        "system": "Be brief.",
        "stream": True,
        "temperature": 0,
    }


def test_request_version_override_extra_headers_and_no_system():
    req = request(
        base_url="https://gateway.example/anthropic/",
        messages=(Message("user", "hi"),),
        options={"anthropic_version": "2024-01-01"},
        headers={"anthropic-beta": "x"},
    )
    http = PROTOCOL.build_request(req)
    assert http.url == "https://gateway.example/anthropic/v1/messages"
    assert http.headers["anthropic-version"] == "2024-01-01"
    assert http.headers["anthropic-beta"] == "x"
    assert "system" not in json.loads(http.body)


def test_config_errors():
    assert PROTOCOL.config_errors({}, True) == []
    assert PROTOCOL.config_errors({"anthropic_version": "2023-06-01"}, True) == []
    assert PROTOCOL.config_errors({"anthropic_version": 2023}, True) == [
        "options.anthropic_version: must be a version string such as 2023-06-01"
    ]


def test_http_error_message_and_kind():
    body = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    assert PROTOCOL.error_message(529, body) == "HTTP 529: overloaded_error: Overloaded"
    assert str(classify_http_status(529)) == "server_error"
    assert PROTOCOL.error_message(502, b"<html>bad gateway</html>") == "HTTP 502: HTML error page"
    assert PROTOCOL.request_id({"request-id": "req_1"}) == "req_1"


# ------------------------------------------------------------------- stream
def test_ping_block_start_and_whitespace_are_not_visible_answer():
    block = event({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    ping = event({"type": "ping"}, pad="")
    reads = [START, block, ping, text("\n\n"), text("Hi"), output(3), STOP]
    m = replay_stamped(PROTOCOL, reads).metrics
    assert (m.ttft_ms, m.ttft_answer_ms, m.total_ms) == (3, 4, 6)
    assert (m.output_tokens, m.input_tokens, m.model_version) == (3, 7, "claude-x")


def test_signature_and_empty_thinking_are_not_tokens():
    signature = event(
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "Eq"}}
    )
    reads = [START, thinking(""), signature, thinking("hmm"), text("ok"), output(9), STOP]
    m = replay_stamped(PROTOCOL, reads).metrics
    assert (m.ttft_ms, m.ttft_answer_ms, m.chunks) == (3, 4, 2)


def test_tool_name_is_a_token_redacted_thinking_is_not():
    redacted = event(
        {"type": "content_block_start", "index": 0, "content_block": {"type": "redacted_thinking", "data": "EqQ"}}
    )
    tool = event(
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "t", "name": "get_weather", "input": {}},
        }
    )
    args = event(
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"city"'}}
    )
    result = replay_stamped(PROTOCOL, [START, redacted, tool, args, output(20, "tool_use"), STOP])
    m = result.metrics
    assert result.ok
    assert (m.ttft_ms, m.ttft_answer_ms, m.chunks, m.output_tokens) == (2, None, 2, 20)


def test_cumulative_output_tokens_replace_and_cache_counts():
    usage = {"input_tokens": 5, "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 20, "output_tokens": 1}
    start = event({"type": "message_start", "message": {"model": "m", "usage": usage}})
    m = replay_stamped(PROTOCOL, [start, text("a"), output(4), text("b"), output(11), STOP]).metrics
    assert (m.output_tokens, m.tokens_source) == (11, "usage")
    assert (m.input_tokens, m.cache_read_tokens) == (1025, 1000)


def test_overloaded_error_event_after_tokens():
    error = event(
        {"type": "error", "error": {"details": None, "type": "overloaded_error", "message": "Overloaded"}}, pad="      "
    )
    result = replay_stamped(PROTOCOL, [START, text("Hel"), error])
    assert (str(result.error_kind), result.error_message) == ("stream_error", "overloaded_error: Overloaded")
    assert result.metrics.ttft_ms == 1


def test_recorded_api_error_fragment():
    raw = (FIXTURES / "anthropic" / "BerriAI__litellm__issue4562_error_event_FRAGMENT.txt").read_bytes()
    result = replay_stamped(PROTOCOL, [raw])
    assert (str(result.error_kind), result.error_message) == ("stream_error", "api_error: Internal server error")


def test_rate_limit_error_event_is_rate_limited():
    error = event({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}})
    assert str(replay_stamped(PROTOCOL, [START, error]).error_kind) == "rate_limited"


@pytest.mark.parametrize(
    ("reads", "kind"),
    [
        ([], "truncated"),
        ([START], "truncated"),
        ([START, text("partial")], "truncated"),
        ([START, text("Hi"), b'event: message_delta\ndata: {"type":"message_de'], "truncated"),
        ([START, output(0), STOP], "empty"),
        ([START, b"event: content_block_delta\ndata: {not json\n\n"], "protocol"),
        ([START, b"data: \xff\xfe\n\n"], "protocol"),
        ([b"data: " + b"x" * (2 << 20)], "protocol"),
    ],
    ids=[
        "no-body",
        "start-only",
        "cut-mid-answer",
        "cut-mid-event",
        "no-token",
        "bad-json",
        "bad-utf8",
        "oversized-line",
    ],
)
def test_empty_truncated_and_malformed_streams(reads, kind):
    result = replay_stamped(PROTOCOL, reads)
    assert str(result.error_kind) == kind


def test_truncated_stream_estimates_instead_of_trusting_the_start_placeholder():
    m = replay_stamped(PROTOCOL, [START, text("Hello there, world")]).metrics
    assert m.tokens_source == "estimate" and m.output_tokens > 1


# --------------------------------------------------------------- robustness
VOCABULARY = [
    "type", "message", "usage", "model", "delta", "index", "content_block", "text", "thinking", "name",
    "partial_json", "input_tokens", "output_tokens", "cache_read_input_tokens", "stop_reason", "error",
    "message_start", "message_delta", "message_stop", "content_block_start", "content_block_delta",
    "text_delta", "thinking_delta", "input_json_delta", "signature_delta", "tool_use", "redacted_thinking",
    "ping", "overloaded_error", "rate_limit_error",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.lists(st.integers(0, 10**6), max_size=6))
def test_random_bytes_never_raise(data, points):
    assert_robust(PROTOCOL, cut(data, points))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(VOCABULARY), json_values(VOCABULARY)), max_size=8),
    st.lists(st.integers(0, 10**6), max_size=6),
)
def test_wrongly_typed_events_never_raise(events, points):
    raw = b"".join(f"event: {name}\ndata: {json.dumps(value)}\n\n".encode() for name, value in events)
    assert_robust(PROTOCOL, cut(raw, points))
