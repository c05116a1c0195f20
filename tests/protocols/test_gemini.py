from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.protocols import get_protocol, json_array
from monitor.protocols.base import Message, ProbeRequest

from .recorded import FIXTURES, assert_robust, cut, json_values, replay_stamped, text_by_kind

PROTOCOL = get_protocol("gemini")


def chunk(*parts: dict, finish: str | None = None, usage: dict | None = None, index: int = 0) -> dict:
    candidate: dict = {"content": {"parts": list(parts), "role": "model"}, "index": index}
    if finish:
        candidate["finishReason"] = finish
    out: dict = {"candidates": [candidate], "modelVersion": "gemini-2.5-flash"}
    if usage:
        out["usageMetadata"] = usage
    return out


def sse(obj: dict) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\r\n\r\n"


def array(*objs: dict) -> list[bytes]:
    """A JSON-array stream, one read per element (the last one closes the array)."""
    pieces = [("[" if i == 0 else "\r\n,\r\n") + json.dumps(o, indent=2) for i, o in enumerate(objs)]
    pieces[-1] += "]"
    return [p.encode() for p in pieces]


def request(**kw) -> ProbeRequest:
    base = dict(
        base_url="https://generativelanguage.googleapis.com",
        model="gemini-2.5-flash",
        messages=(
            Message("system", "Be brief."),
            Message("user", "Hi"),
            Message("assistant", "Hello"),
            Message("user", "TTFT?"),
        ),
        max_tokens=64,
        api_key="AIza-secret",
    )
    return ProbeRequest(**(base | kw))


# ------------------------------------------------------------------ request
def test_request_ai_studio():
    http = PROTOCOL.build_request(request(params={"generationConfig": {"thinkingConfig": {"thinkingBudget": 0}}}))
    assert http.url == (
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    assert http.headers["x-goog-api-key"] == "AIza-secret"
    assert "authorization" not in http.headers
    assert json.loads(http.body) == {
        "contents": [
            {"role": "user", "parts": [{"text": "Hi"}]},
            {"role": "model", "parts": [{"text": "Hello"}]},
            {"role": "user", "parts": [{"text": "TTFT?"}]},
        ],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        # params are deep-merged: maxOutputTokens survives next to thinkingConfig
        "generationConfig": {"maxOutputTokens": 64, "thinkingConfig": {"thinkingBudget": 0}},
    }


def test_request_vertex_ai():
    req = request(
        base_url="https://europe-west4-aiplatform.googleapis.com",
        api_key="ya29.token",
        messages=(Message("user", "Hi"),),
        options={"vertex": {"project": "my-proj", "location": "europe-west4"}},
    )
    http = PROTOCOL.build_request(req)
    assert http.url == (
        "https://europe-west4-aiplatform.googleapis.com/v1/projects/my-proj/locations/europe-west4"
        "/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    assert http.headers["authorization"] == "Bearer ya29.token"
    assert "x-goog-api-key" not in http.headers
    assert "systemInstruction" not in json.loads(http.body)


@pytest.mark.parametrize(
    ("options", "errors"),
    [
        ({}, []),
        ({"vertex": {"project": "p", "location": "us-central1"}}, []),
        ({"vertex": "p"}, ["options.vertex: must be a mapping with project and location"]),
        ({"vertex": {"project": "p"}}, ["options.vertex.location: required, a non-empty string"]),
        (
            {"vertex": {"project": "", "location": 5}},
            [
                "options.vertex.project: required, a non-empty string",
                "options.vertex.location: required, a non-empty string",
            ],
        ),
    ],
)
def test_config_errors(options, errors):
    assert PROTOCOL.config_errors(options, True) == errors


def test_content_types_and_error_messages():
    assert PROTOCOL.accepts_content_type("text/event-stream")
    assert PROTOCOL.accepts_content_type("application/json; charset=UTF-8")
    assert not PROTOCOL.accepts_content_type("text/html")
    body = b'{"error": {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED"}}'
    assert PROTOCOL.error_message(429, body) == "HTTP 429: RESOURCE_EXHAUSTED: Quota exceeded"
    assert PROTOCOL.error_message(400, b"[" + body + b"]") == "HTTP 400: RESOURCE_EXHAUSTED: Quota exceeded"
    assert PROTOCOL.error_message(500, b"oops") == "HTTP 500: oops"


# ------------------------------------------------------------------- stream
def test_thoughts_are_reasoning_and_usage_is_the_last_not_the_sum():
    reads = [
        sse(chunk({"text": "Let me think", "thought": True}, usage={"promptTokenCount": 9, "thoughtsTokenCount": 30})),
        sse(chunk({"text": "Hi"}, usage={"promptTokenCount": 9, "candidatesTokenCount": 1, "thoughtsTokenCount": 30})),
        sse(
            chunk(
                {"text": " there"},
                finish="STOP",
                usage={
                    "promptTokenCount": 9,
                    "candidatesTokenCount": 2,
                    "thoughtsTokenCount": 30,
                    "cachedContentTokenCount": 4,
                },
            )
        ),
    ]
    m = replay_stamped(PROTOCOL, reads).metrics
    assert (m.ttft_ms, m.ttft_answer_ms, m.total_ms) == (0, 1, 2)
    assert (m.output_tokens, m.reasoning_tokens, m.input_tokens, m.cache_read_tokens) == (32, 30, 9, 4)
    assert m.model_version == "gemini-2.5-flash"
    assert text_by_kind(PROTOCOL, reads) == {"reasoning": "Let me think", "answer": "Hi there"}


def test_terminal_is_the_last_event_with_finish_reason():
    usage_only = {"usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2}}
    # a trailing usage-only event does not move the terminal
    m = replay_stamped(PROTOCOL, [sse(chunk({"text": "a"})), sse(chunk({"text": "b"}, finish="STOP")), sse(usage_only)])
    assert (m.metrics.total_ms, m.metrics.output_tokens) == (1, 2)
    # two candidates: the answer ends when the second one finishes
    reads = [
        sse(
            {
                "candidates": [
                    {"index": 0, "content": {"parts": [{"text": "a"}]}},
                    {"index": 1, "content": {"parts": [{"text": "b"}]}},
                ]
            }
        ),
        sse(chunk({"text": "c"}, finish="STOP", index=0)),
        sse(chunk({"text": "d"}, finish="STOP", index=1)),
    ]
    assert replay_stamped(PROTOCOL, reads).metrics.total_ms == 2


def test_function_call_is_a_tool_token():
    reads = [sse(chunk({"functionCall": {"name": "multiply", "args": {"x": 5}}}, finish="STOP"))]
    m = replay_stamped(PROTOCOL, reads).metrics
    assert (m.ttft_ms, m.ttft_answer_ms) == (0, None)
    assert text_by_kind(PROTOCOL, reads) == {"tool": 'multiply{"x": 5}'}


def test_error_object_in_the_stream():
    error = {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}
    for reads in ([sse(chunk({"text": "a"})), sse(error)], array(chunk({"text": "a"}), error)):
        result = replay_stamped(PROTOCOL, reads)
        assert (str(result.error_kind), result.error_message) == (
            "stream_error",
            "UNAVAILABLE: The model is overloaded.",
        )
        assert result.metrics.ttft_ms == 0


def test_blocked_prompt_is_empty():
    result = replay_stamped(PROTOCOL, [sse({"promptFeedback": {"blockReason": "SAFETY"}})])
    assert str(result.error_kind) == "empty"


@pytest.mark.parametrize(
    ("reads", "kind"),
    [
        ([], "truncated"),
        ([b"\r\n  "], "truncated"),
        ([sse(chunk({"text": "a"}))], "truncated"),  # no finishReason: no [DONE] to wait for either
        ([sse(chunk({"text": "a"})), sse(chunk({"text": "b"}, finish="STOP"))[:40]], "truncated"),
        ([b"["], "truncated"),
        ([b'[{"candidates": [{"content": {"parts": [{"text": "a"}]}}]}', b'\r\n,\r\n{"candidates": ['], "truncated"),
        ([sse(chunk({"text": ""}, finish="STOP"))], "empty"),
        ([b"data: {oops\r\n\r\n"], "protocol"),
        ([b'[{"candidates": []}] x'], "protocol"),
        ([b'[{"candidates": []} {}]'], "protocol"),
        ([b'[{"text": "\xff"}]'], "protocol"),
        ([b"[1, 2]"], "protocol"),
        ([b'[{"candidates": []},]'], "protocol"),
        ([b"[,{}]"], "protocol"),
    ],
    ids=[
        "no-body",
        "blank",
        "no-finish",
        "cut-mid-event",
        "open-bracket",
        "cut-element",
        "no-token",
        "bad-sse-json",
        "after-array",
        "missing-comma",
        "bad-utf8",
        "not-objects",
        "trailing-comma",
        "leading-comma",
    ],
)
def test_empty_truncated_and_malformed_streams(reads, kind):
    assert str(replay_stamped(PROTOCOL, reads).error_kind) == kind


def test_json_array_parses_strings_with_brackets_and_escapes():
    tricky = 'a "quoted" ] } [ { \\ \n text 日本'
    reads = array(chunk({"text": tricky}), chunk({"text": "!"}, finish="STOP", usage={"candidatesTokenCount": 5}))
    raw = b"".join(reads)
    for pieces in (reads, [raw], [raw[i : i + 1] for i in range(len(raw))]):
        result = replay_stamped(PROTOCOL, pieces)
        assert result.ok and result.metrics.output_tokens == 5
        assert text_by_kind(PROTOCOL, pieces) == {"answer": tricky + "!"}


def test_json_array_element_size_is_bounded(monkeypatch):
    monkeypatch.setattr(json_array, "MAX_ELEMENT_BYTES", 1000)
    parser = PROTOCOL.new_parser()
    parser.feed(b'[{"candidates": [{"content": {"parts": [{"text": "')
    with pytest.raises(Exception, match="longer than 1000 bytes"):
        for _ in range(20):
            parser.feed(b"x" * 100)


def test_recorded_json_array_fed_one_byte_at_a_time():
    raw = (FIXTURES / "gemini" / "simonw__llm-gemini__flash-latest_json_array_stream.txt").read_bytes()
    result = replay_stamped(PROTOCOL, [raw[i : i + 1] for i in range(len(raw))])
    assert result.ok and result.metrics.output_tokens == 293


# --------------------------------------------------------------- robustness
VOCABULARY = [
    "candidates",
    "content",
    "parts",
    "text",
    "thought",
    "functionCall",
    "name",
    "args",
    "executableCode",
    "code",
    "finishReason",
    "index",
    "usageMetadata",
    "promptTokenCount",
    "candidatesTokenCount",
    "thoughtsTokenCount",
    "cachedContentTokenCount",
    "modelVersion",
    "error",
    "message",
    "status",
    "promptFeedback",
    "blockReason",
    "STOP",
]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.lists(st.integers(0, 10**6), max_size=6))
def test_random_bytes_never_raise(data, points):
    assert_robust(PROTOCOL, cut(data, points))
    assert_robust(PROTOCOL, cut(b"[" + data, points))


@settings(max_examples=200, deadline=None)
@given(st.lists(json_values(VOCABULARY), max_size=6), st.booleans(), st.lists(st.integers(0, 10**6), max_size=6))
def test_wrongly_typed_chunks_never_raise(chunks, as_array, points):
    if as_array:
        raw = ("[" + ",\r\n".join(json.dumps(c) for c in chunks) + "]").encode()
    else:
        raw = b"".join(sse(c) for c in chunks)
    assert_robust(PROTOCOL, cut(raw, points))
