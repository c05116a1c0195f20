from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.protocols import get_protocol
from monitor.protocols.base import Message, ProbeRequest

from .recorded import assert_robust, cut, json_values, replay_stamped, text_by_kind

PROTOCOL = get_protocol("ollama")


def line(obj: dict) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def msg(content: str = "", **extra) -> bytes:
    return line({"model": "llama3.2", "message": {"role": "assistant", "content": content, **extra}, "done": False})


DONE = line(
    {
        "model": "llama3.2",
        "message": {"role": "assistant", "content": ""},
        "done_reason": "stop",
        "done": True,
        "total_duration": 4323876100,
        "load_duration": 63547700,
        "prompt_eval_count": 26,
        "prompt_eval_duration": 1447000000,
        "eval_count": 33,
        "eval_duration": 2800000000,
    }
)


def test_request():
    req = ProbeRequest(
        base_url="http://127.0.0.1:11434",
        model="llama3.2",
        messages=(Message("system", "Be brief."), Message("user", "TTFT?")),
        max_tokens=64,
        params={"options": {"temperature": 0}, "keep_alive": "5m"},
    )
    http = PROTOCOL.build_request(req)
    assert (http.method, http.url) == ("POST", "http://127.0.0.1:11434/api/chat")
    assert "authorization" not in http.headers
    assert json.loads(http.body) == {
        "model": "llama3.2",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "TTFT?"}],
        "stream": True,
        "options": {"num_predict": 64, "temperature": 0},
        "keep_alive": "5m",
    }
    # Ollama has no auth of its own; a key is sent as a bearer token for a proxy in front
    assert PROTOCOL.build_request(replace(req, api_key="k")).headers["authorization"] == "Bearer k"


def test_content_types_and_errors():
    assert PROTOCOL.accepts_content_type("application/x-ndjson")
    assert PROTOCOL.accepts_content_type("application/json; charset=utf-8")
    assert not PROTOCOL.accepts_content_type("text/event-stream")
    assert PROTOCOL.error_message(404, b'{"error":"model \'x\' not found"}') == "HTTP 404: model 'x' not found"


def test_chat_stream_with_thinking_and_server_timing():
    reads = [msg("", thinking="Let me see"), msg("\n"), msg("Hi"), DONE]
    result = replay_stamped(PROTOCOL, reads)
    m = result.metrics
    assert result.ok
    assert (m.ttft_ms, m.ttft_answer_ms, m.total_ms) == (0, 2, 3)
    assert (m.output_tokens, m.input_tokens, m.tokens_source, m.model_version) == (33, 26, "usage", "llama3.2")
    assert m.server_timing == {"total_ms": 4323.8761, "load_ms": 63.5477, "prompt_eval_ms": 1447.0, "eval_ms": 2800.0}
    assert text_by_kind(PROTOCOL, reads) == {"reasoning": "Let me see", "answer": "\nHi"}


def test_tool_calls_are_tool_tokens():
    call = {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    reads = [msg("", tool_calls=[call]), DONE]
    assert replay_stamped(PROTOCOL, reads).metrics.ttft_ms == 0
    assert text_by_kind(PROTOCOL, reads) == {"tool": 'get_weather{"city": "Paris"}'}


def test_generate_shape_parses_too():
    reads = [
        line({"model": "m", "response": "A", "done": False}),
        line({"model": "m", "response": "", "done": True, "eval_count": 1}),
    ]
    result = replay_stamped(PROTOCOL, reads)
    assert result.ok and result.metrics.ttft_ms == 0 and result.metrics.output_tokens == 1


def test_error_line_after_http_200():
    result = replay_stamped(PROTOCOL, [msg("Hi"), line({"error": "an error was encountered while running the model"})])
    assert (str(result.error_kind), result.error_message) == (
        "stream_error",
        "an error was encountered while running the model",
    )


def test_blank_lines_crlf_and_lines_after_done():
    raw = msg("Hi").replace(b"\n", b"\r\n") + b"\r\n\r\n" + DONE + msg("late")
    result = replay_stamped(PROTOCOL, [raw])
    assert result.ok and result.metrics.chunks == 1


@pytest.mark.parametrize(
    ("reads", "kind"),
    [
        ([], "truncated"),
        ([msg("Hi")], "truncated"),
        ([msg("Hi"), DONE[:40]], "truncated"),
        ([line({"model": "m", "message": {"content": ""}, "done": True, "eval_count": 0})], "empty"),
        ([b"{not json\n"], "protocol"),
        ([b'{"message": {"content": "\xe3\x81"}}\n'], "protocol"),
    ],
    ids=["no-body", "no-done", "cut-done-line", "no-token", "bad-json", "bad-utf8"],
)
def test_empty_truncated_and_malformed_streams(reads, kind):
    assert str(replay_stamped(PROTOCOL, reads).error_kind) == kind


def test_last_line_without_newline_still_finishes():
    assert replay_stamped(PROTOCOL, [msg("Hi"), DONE.rstrip(b"\n")]).ok


VOCABULARY = [
    "model", "message", "content", "thinking", "tool_calls", "function", "name", "arguments", "response", "done",
    "done_reason", "eval_count", "prompt_eval_count", "total_duration", "load_duration", "eval_duration", "error",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.lists(st.integers(0, 10**6), max_size=6))
def test_random_bytes_never_raise(data, points):
    assert_robust(PROTOCOL, cut(data, points))


@settings(max_examples=200, deadline=None)
@given(st.lists(json_values(VOCABULARY), max_size=8), st.lists(st.integers(0, 10**6), max_size=6))
def test_wrongly_typed_lines_never_raise(objs, points):
    raw = b"".join(json.dumps(o).encode() + b"\n" for o in objs)
    assert_robust(PROTOCOL, cut(raw, points))
