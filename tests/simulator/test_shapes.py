"""Each protocol's stream has the shape of the real provider's, over real HTTP."""

from __future__ import annotations

import json
from itertools import groupby
from pathlib import Path

import httpx
import pytest
from botocore.eventstream import EventStreamBuffer

from monitor.simulator.wire import eventstream

from .simwire import PROTOCOLS, build, output_tokens, parse, sse_events

STREAMS = Path(__file__).parents[1] / "fixtures" / "streams"
CONTENT_TYPES = {
    "openai-chat": "text/event-stream",
    "azure-openai": "text/event-stream",
    "openai-responses": "text/event-stream",
    "anthropic": "text/event-stream",
    "gemini": "text/event-stream",
    "bedrock-converse": "application/vnd.amazon.eventstream",
    "ollama": "application/x-ndjson",
}
ID_HEADERS = {"anthropic": "request-id", "bedrock-converse": "x-amzn-requestid", "azure-openai": "apim-request-id"}


def fetch(client: httpx.Client, protocol: str, model: str, **kw) -> httpx.Response:
    path, headers, body = build(protocol, model, **kw)
    return client.post(path, headers=headers, json=body)


@pytest.mark.parametrize("reasoning", [0, 3])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_complete_stream(client: httpx.Client, sim, protocol: str, reasoning: int) -> None:
    model = f"sim:ttft=5:itl=1:tokens=7:reasoning={reasoning}"
    response = fetch(client, protocol, model)
    assert response.status_code == 200
    assert response.headers["content-type"].split(";")[0] == CONTENT_TYPES[protocol]
    request_id = response.headers["x-request-id"]
    if protocol in ID_HEADERS:
        assert response.headers[ID_HEADERS[protocol]] == request_id
    parsed = parse(protocol, response.content, response.headers["content-type"])
    assert parsed.malformed == 0 and parsed.error is None
    assert parsed.terminal
    assert parsed.kinds == ["reasoning"] * reasoning + ["answer"] * 7  # reasoning first
    assert parsed.answer.startswith("The time to first token")
    assert output_tokens(protocol, parsed.usage) == 7 + reasoning
    truth = sim.truth(request_id)
    assert truth["token_count"] == 7 + reasoning and truth["reasoning_tokens"] == reasoning
    assert truth["completed"] and truth["status"] == 200 and truth["protocol"] == protocol
    if protocol != "bedrock-converse":  # the returned model name
        assert model.encode() in response.content


def test_openai_chat_chunks(client: httpx.Client) -> None:
    response = fetch(client, "openai-chat", "sim:ttft=5:itl=1:tokens=3")
    events = sse_events(response.content)
    chunks = [json.loads(data) for _, data in events[:-1]]
    assert events[-1][1] == b"[DONE]"
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": "", "refusal": None}
    assert [c["choices"][0]["delta"]["content"] for c in chunks[1:4]] == ["The", " time", " to"]
    assert chunks[4]["choices"][0]["finish_reason"] == "stop" and chunks[4]["choices"][0]["delta"] == {}
    assert chunks[5]["choices"] == [] and chunks[5]["usage"]["completion_tokens"] == 3
    assert all(c["object"] == "chat.completion.chunk" and c["usage"] is None for c in chunks[:5])
    assert {c["id"] for c in chunks} == {chunks[0]["id"]}


def test_openai_chat_without_include_usage(client: httpx.Client) -> None:
    response = fetch(client, "openai-chat", "sim:ttft=1:itl=1:tokens=3", include_usage=False)
    chunks = [json.loads(data) for _, data in sse_events(response.content)[:-1]]
    assert all("usage" not in c for c in chunks) and len(chunks) == 5


def test_usage_can_be_withheld(client: httpx.Client) -> None:
    for protocol in PROTOCOLS:
        response = fetch(client, protocol, "sim:ttft=1:itl=1:tokens=3:usage=false")
        parsed = parse(protocol, response.content, response.headers["content-type"])
        assert parsed.terminal and len(parsed.tokens) == 3
        assert not parsed.usage or (protocol == "ollama" and "eval_count" not in parsed.usage), protocol


def test_azure_filter_chunks(client: httpx.Client) -> None:
    deployment = "sim:ttft=1:itl=1:tokens=3"
    response = fetch(client, "azure-openai", deployment, include_usage=False)
    chunks = [json.loads(data) for _, data in sse_events(response.content)[:-1]]
    first = chunks[0]
    assert first["choices"] == [] and first["id"] == "" and first["prompt_filter_results"]
    assert chunks[1]["choices"][0]["delta"]["role"] == "assistant"
    assert chunks[1]["choices"][0]["content_filter_results"] == {}
    content = [c for c in chunks if c["choices"] and c["choices"][0]["delta"].get("content")]
    assert content and all(c["choices"][0]["content_filter_results"]["hate"]["filtered"] is False for c in content)
    assert chunks[-1]["model"] == deployment


def test_azure_needs_api_version(client: httpx.Client) -> None:
    path, headers, body = build("azure-openai", "d")
    response = client.post(path.split("?")[0], headers=headers, json=body)
    assert response.status_code == 400 and response.json()["error"]["code"] == "400"


def _collapsed(names: list[str]) -> list[str]:
    return [name for name, _ in groupby(names)]


def test_responses_events_match_recording(client: httpx.Client) -> None:
    recorded = sse_events(
        (STREAMS / "openai_responses/pydantic__pydantic-ai__responses_reasoning_thinking_iter.txt").read_bytes()
    )
    response = fetch(client, "openai-responses", "sim:ttft=2:itl=1:tokens=4:reasoning=3")
    events = sse_events(response.content)
    ours = _collapsed([name for name, _ in events])
    # The recording has four summary parts; one is enough for a simulator.
    theirs = _collapsed([name for name, _ in recorded])
    part = ["response.reasoning_summary_part.added", "response.reasoning_summary_text.delta"]
    part += ["response.reasoning_summary_text.done", "response.reasoning_summary_part.done"]
    assert theirs[:3] + part + theirs[-8:] == ours
    payloads = [json.loads(data) for _, data in events]
    assert [p["sequence_number"] for p in payloads] == list(range(len(payloads)))
    assert all(name == p["type"] for (name, _), p in zip(events, payloads, strict=True))
    usage = payloads[-1]["response"]["usage"]
    assert usage["output_tokens"] == 7 and usage["output_tokens_details"]["reasoning_tokens"] == 3


def test_anthropic_events_match_recording(client: httpx.Client) -> None:
    recorded = sse_events((STREAMS / "anthropic/simonw__llm-anthropic__sonnet45_thinking_prompt.txt").read_bytes())
    response = fetch(client, "anthropic", "sim:ttft=2:itl=1:tokens=4:reasoning=3")
    events = [(name, json.loads(data)) for name, data in sse_events(response.content)]
    assert _collapsed([n for n, _ in events]) == _collapsed([n for n, _ in recorded])
    assert events[0][1]["message"]["usage"]["output_tokens"] == 1
    deltas = [e["delta"]["type"] for n, e in events if n == "content_block_delta"]
    assert deltas == ["thinking_delta"] * 3 + ["signature_delta"] + ["text_delta"] * 4
    assert [n for n, _ in events[:3]] == ["message_start", "content_block_start", "ping"]
    assert events[-2][1]["usage"]["output_tokens"] == 7 and events[-2][1]["delta"]["stop_reason"] == "end_turn"


def test_gemini_sse_framing_and_cumulative_usage(client: httpx.Client) -> None:
    response = fetch(client, "gemini", "sim:ttft=2:itl=1:tokens=4:reasoning=2")
    body = response.content
    assert body.count(b"\r\n\r\n") == 7 and b"[DONE]" not in body
    chunks = [json.loads(data) for _, data in sse_events(body)]
    parts = [c["candidates"][0]["content"]["parts"][0] for c in chunks]
    assert [p.get("thought", False) for p in parts] == [True, True, False, False, False, False, False]
    totals = [c["usageMetadata"]["totalTokenCount"] for c in chunks]
    assert totals == sorted(totals)
    last = chunks[-1]
    assert last["candidates"][0]["finishReason"] == "STOP"
    assert last["usageMetadata"]["candidatesTokenCount"] == 4 and last["usageMetadata"]["thoughtsTokenCount"] == 2
    assert all("finishReason" not in c["candidates"][0] for c in chunks[:-1])


def test_gemini_json_array_stream(client: httpx.Client) -> None:
    response = fetch(client, "gemini", "sim:ttft=2:itl=1:tokens=4", sse=False)
    assert response.headers["content-type"].startswith("application/json")
    body = response.content
    assert body.startswith(b"[{") and body.endswith(b"}]") and body.count(b"\r\n,\r\n") == 4
    chunks = json.loads(body)
    assert len(chunks) == 5 and chunks[-1]["candidates"][0]["finishReason"] == "STOP"


def test_gemini_vertex_route(client: httpx.Client, sim) -> None:
    path = "/v1/projects/p1/locations/europe-west4/publishers/google/models/sim:tokens=2:ttft=1:streamGenerateContent"
    response = client.post(path + "?alt=sse", headers={"authorization": "Bearer tok"}, json={"contents": []})
    assert response.status_code == 200
    assert len(parse("gemini", response.content, "text/event-stream").tokens) == 2
    assert sim.truth(response.headers["x-request-id"])["region"] == "europe-west4"


def test_bedrock_frames_decode_with_botocore(client: httpx.Client) -> None:
    response = fetch(client, "bedrock-converse", "sim:ttft=2:itl=1:tokens=3:reasoning=2")
    buffer = EventStreamBuffer()
    buffer.add_data(response.content)
    messages = list(buffer)
    names = [m.headers[":event-type"] for m in messages]
    assert names == ["messageStart"] + ["contentBlockDelta"] * 3 + ["contentBlockStop"] + ["contentBlockDelta"] * 3 + [
        "contentBlockStop",
        "messageStop",
        "metadata",
    ]
    assert all(set(m.headers) == {":event-type", ":content-type", ":message-type"} for m in messages)
    payloads = [json.loads(m.payload) for m in messages]
    assert payloads[3]["delta"]["reasoningContent"]["signature"]
    assert payloads[5] == {"contentBlockIndex": 1, "delta": {"text": "The"}}
    metadata = payloads[-1]
    assert metadata["usage"]["outputTokens"] == 5 and metadata["metrics"]["latencyMs"] >= 2
    assert response.headers["x-amzn-requestid"]


def test_bedrock_model_id_with_colon(client: httpx.Client, sim, model_name: str) -> None:
    model = f"us.amazon.{model_name}-v1:0"
    sim.set_model(model, ttft_ms=1, itl_ms=1, output_tokens=2, jitter=0)
    response = fetch(client, "bedrock-converse", model)
    assert response.status_code == 200 and len(parse("bedrock-converse", response.content).tokens) == 2
    assert sim.truth(response.headers["x-request-id"])["model"] == model


@pytest.mark.parametrize("name", sorted(p.name for p in (STREAMS / "bedrock").glob("*.bin")))
def test_eventstream_encoder_reproduces_recorded_frames(name: str) -> None:
    raw = (STREAMS / "bedrock" / name).read_bytes()
    buffer = EventStreamBuffer()
    buffer.add_data(raw)
    rebuilt = b"".join(eventstream.encode_message(m.headers.items(), m.payload) for m in buffer)
    assert rebuilt == raw


def test_eventstream_exception_frame_decodes() -> None:
    buffer = EventStreamBuffer()
    buffer.add_data(eventstream.exception("throttlingException", b'{"message":"slow down"}'))
    (message,) = list(buffer)
    assert message.headers[":message-type"] == "exception"
    assert message.headers[":exception-type"] == "throttlingException"


def test_ollama_lines_and_durations(client: httpx.Client, sim) -> None:
    response = fetch(client, "ollama", "sim:ttft=30:itl=5:tokens=4")
    lines = [json.loads(line) for line in response.content.splitlines()]
    assert [line["done"] for line in lines] == [False] * 4 + [True]
    final = lines[-1]
    assert list(final)[3:5] == ["done_reason", "done"]  # /api/chat's key order
    assert final["eval_count"] == 4 and final["prompt_eval_count"] >= 1
    truth = sim.truth(response.headers["x-request-id"])
    ttft_ns = truth["first_token_ns"] - truth["arrival_ns"]
    assert final["load_duration"] + final["prompt_eval_duration"] == ttft_ns
    assert final["eval_duration"] == truth["last_token_ns"] - truth["first_token_ns"]
    assert 44e6 <= final["total_duration"] <= truth["end_ns"] - truth["arrival_ns"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_max_tokens_caps_output(client: httpx.Client, protocol: str) -> None:
    response = fetch(client, protocol, "sim:ttft=1:itl=1:tokens=20:reasoning=2", max_tokens=5)
    parsed = parse(protocol, response.content, response.headers["content-type"])
    assert parsed.kinds == ["reasoning"] * 2 + ["answer"] * 3
    assert output_tokens(protocol, parsed.usage) == 5
    reason = {
        "openai-chat": b'"finish_reason":"length"',
        "azure-openai": b'"finish_reason":"length"',
        "openai-responses": b"response.incomplete",
        "anthropic": b'"stop_reason":"max_tokens"',
        "gemini": b'"finishReason":"MAX_TOKENS"',
        "bedrock-converse": b'"stopReason":"max_tokens"',
        "ollama": b'"done_reason":"length"',
    }[protocol]
    assert reason in response.content


def test_tokens_per_chunk(client: httpx.Client) -> None:
    response = fetch(client, "gemini", "sim:ttft=1:itl=1:tokens=10:chunk=4")
    parsed = parse("gemini", response.content, "text/event-stream")
    assert len(parsed.tokens) == 3 and parsed.usage["candidatesTokenCount"] == 10
    assert parsed.answer == "The time to first token measures how long a client"
