"""Every recorded real stream keeps the provider's id as `request_id` (DESIGN §17).

A recorded body carries no headers, so what replay finds is the body's own id:
Anthropic `message_start.message.id`, OpenAI chunk `id`, Responses `response.id`,
Gemini `responseId`, Groq `x_groq.id`. The expected ids were copied out of the
files by hand (not computed with the parsers); a file that names no id expects
None, and every file on disk must be listed, so none passes by accident.
Headers, where a response has them, win over the body (monitor.protocols.request_ids).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from monitor.probe.replay import replay
from monitor.protocols import get_protocol

from .recorded import FIXTURES, replay_stamped, split_events, sse_events
from .test_recorded_streams import PROTOCOL_OF_FOLDER
from .test_route_truth import read_headers

ROOT = Path(__file__).resolve().parents[1] / "fixtures"
LITELLM = ROOT / "gateways" / "litellm_proxy"

# fmt: off
EXPECTED = {
    # Anthropic: message_start.message.id; the error fragment starts after message_start
    "anthropic/BerriAI__litellm__issue4562_error_event_FRAGMENT.txt": None,
    "anthropic/pydantic__pydantic-ai__redacted_thinking.txt": "msg_018XZkwvj9asBiffg3fXt88s",
    "anthropic/pydantic__pydantic-ai__sonnet45_short_text.txt": "msg_018E1hg8GoVTGEKQY3ovMcSJ",
    "anthropic/pydantic__pydantic-ai__sonnet4_thinking_signature.txt": "msg_01ALwQ87pTS7hH1PjSdC9wJD",
    "anthropic/simonw__llm-anthropic__haiku45_tool_calls_gzip.txt": "msg_01BnVamfF7ccY9Qt3nZHAyaG",
    "anthropic/simonw__llm-anthropic__opus46_adaptive_thinking.txt": "msg_016xaB3rMXQHTBuAJvtvxaQx",
    "anthropic/simonw__llm-anthropic__sonnet45_prompt.txt": "msg_017A4s3HAsrqf5d2WvBmrpLr",
    "anthropic/simonw__llm-anthropic__sonnet45_thinking_prompt.txt": "msg_01RTjjePNDCQNgHXg3KeDPfv",
    # Azure: the first chunk's id is "", the second names the completion
    "azure_openai/quarkiverse__quarkus-langchain4j__gpt-4o_azure_stream.txt": "chatcmpl-BleatwEUn3D8iXsgXpDqeOPEMuW3j",
    # Bedrock ConverseStream frames carry no id (only the x-amzn-RequestId header does)
    "bedrock/pydantic__pydantic-ai__converse_stream_claude_thinking.bin": None,
    "bedrock/pydantic__pydantic-ai__converse_stream_gpt-oss_empty_delta.bin": None,
    "bedrock/pydantic__pydantic-ai__converse_stream_nova-micro.bin": None,
    # Gemini: responseId, SSE and JSON array alike
    "gemini/pydantic__pydantic-ai__gemini-2.0-flash_sse.txt": "w1peaMz6INOvnvgPgYfPiQY",
    "gemini/pydantic__pydantic-ai__gemini-2.5-flash_usage_mid_stream.txt": "ru1garvBEoOiqtsP2fznmQw",
    "gemini/pydantic__pydantic-ai__gemini-2.5-pro_thoughts_sse.txt": "beHBaJfEMIi-qtsP3769-Q8",
    "gemini/pydantic__pydantic-ai__vertex_flex_stream.txt": "a9--aa6MOKL4vdIPz7X2iQ4",
    "gemini/simonw__llm-gemini__flash-latest_json_array_stream.txt": "IopyaseNCL-s-8YP7urOoAY",
    "gemini/simonw__llm-gemini__gemini3_flash_json_array_tool_call.txt": "6XJFadi3PJOx-sAPgJ3S6Qs",
    # Ollama's NDJSON names no request
    "ollama/attogram__ollama-bash-lib__generate_dolphin3_8b_cold_load.ndjson": None,
    "ollama/attogram__ollama-bash-lib__generate_dolphin3_8b_warm.ndjson": None,
    "ollama/blog-post-unknown-repo__chat_llama3.2_windows.ndjson": None,
    "ollama/llm-zoomcamp-student-fork__chat_gemma2b_cold_docker.ndjson": None,
    # OpenAI Chat: the chunk id (not a tool call's call_… id)
    "openai_chat/pydantic__pydantic-ai__gpt-4o-mini_tool_call_include_usage.txt": "chatcmpl-Dx0XpqH8w09uBXwq1zFGYdETjtnEl",
    "openai_chat/pydantic__pydantic-ai__gpt-4o_include_usage.txt": "chatcmpl-C2P2HtMJhPkWjQ2adKerkdVilXmRL",
    "openai_chat/pydantic__pydantic-ai__gpt-5_include_usage_moderation.txt": "chatcmpl-E4Rjs6IxaJVge9Ntk5keJsaeDy6vS",
    # compatible hosts: their chunk id; Groq's x_groq.id is its request id and wins
    "openai_compatible/pydantic__pydantic-ai__crusoe_streaming.txt": "chatcmpl-bcfbe349402eb3d2",
    "openai_compatible/pydantic__pydantic-ai__deepseek_reasoner_reasoning_content.txt": "33be18fc-3842-486c-8c29-dd8e578f7f20",
    "openai_compatible/pydantic__pydantic-ai__groq_stream.txt": "req_01khrvt32ze9rb75za4xqmdz13",
    "openai_compatible/pydantic__pydantic-ai__hf_router_novita.txt": "ebafdc26c3296ed027c5cd6565fa1bce",
    "openai_compatible/pydantic__pydantic-ai__hf_router_together_thinking.txt": "oV1nHvx-28Eivz-9c4b16f37c27e605",
    "openai_compatible/pydantic__pydantic-ai__mistral_magistral_thinking.txt": "9f9d90210f194076abeee223863eaaf0",
    "openai_compatible/pydantic__pydantic-ai__openrouter_stream_error.txt": "gen-1762179802-UN8pkJI4AGZvryk0kFnb",
    "openai_compatible/pydantic__pydantic-ai__openrouter_streaming_reasoning.txt": "gen-1765226419-AGrwjunAftQIAgweibL8",
    "openai_compatible/pydantic__pydantic-ai__zai_glm_thinking.txt": "202607010739425543ff9439144b2c",
    "openai_compatible/unknown-repo__llamacpp_b6925_gpt-oss_tail_FRAGMENT.txt": "chatcmpl-mHDb1kfAQIhcvp8kkPeWJsO8gpTIUA3a",
    "openai_compatible/unknown-repo__llamacpp_b9020_gemma4_ABRIDGED.txt": "chatcmpl-yQMMAFzny5PM9OKAjg4lXbnwLSL5O2f1",
    # Responses: response.id (OpenRouter's gen-…), not the rs_/msg_/fc_ item ids
    "openai_responses/pydantic__pydantic-ai__openrouter_responses_raw_cot.txt": "gen-1764265411-Fu1iEX7h5MRWiL79lb94",
    "openai_responses/pydantic__pydantic-ai__responses_reasoning_thinking_iter.txt": "resp_68c42d0fb418819dbfa579f69406b49508fbf9b1584184ff",
    "openai_responses/pydantic__pydantic-ai__responses_stream_text.txt": "resp_67e554a21aa88191b65876ac5e5bbe0406c52f0e511c76ed",
    "openai_responses/pydantic__pydantic-ai__responses_stream_tool_call.txt": "resp_67e554a155508191900ee113293c4c830794405d35281ae2",
    "openai_responses/pydantic__pydantic-ai__responses_streaming_usage.txt": "resp_0050471a34b36ae60068c97b94a480819587a9d70cf2979b33",
}
# fmt: on

# An Anthropic error as users quote it (an overloaded stream, "received error while streaming: …").
ANTHROPIC_ERROR = (
    b'{"type":"error","error":{"details":null,"type":"overloaded_error","message":"Overloaded"},'
    b'"request_id":"req_011CYeT1GYt7Kg27RdtV9zeo"}'
)


def recorded_files() -> list[str]:
    return sorted(str(p.relative_to(FIXTURES)) for p in FIXTURES.rglob("*") if p.is_file() and p.name != "SOURCES.md")


def replay_file(name: str, headers: dict[str, str] | None = None):
    folder = name.split("/", 1)[0]
    pieces = split_events(folder, (FIXTURES / name).read_bytes())
    protocol = get_protocol(PROTOCOL_OF_FOLDER[folder])
    if headers is None:
        return replay_stamped(protocol, pieces)
    return replay(protocol, [(k, p) for k, p in enumerate(pieces)], headers=headers)


def test_every_recorded_stream_is_listed():
    assert recorded_files() == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_replay_keeps_the_body_id(name: str):
    result = replay_file(name)
    assert result.request_id == EXPECTED[name]
    assert result.metrics.request_id == EXPECTED[name]


def test_a_failed_stream_keeps_its_id():
    """The samples a credit claim lists are the failed ones: a stream error keeps the id."""
    result = replay_file("openai_compatible/pydantic__pydantic-ai__openrouter_stream_error.txt")
    assert not result.ok and result.request_id == "gen-1762179802-UN8pkJI4AGZvryk0kFnb"
    # Anthropic's in-stream error names the request outright: after the fragment's own error
    # event (which names none) the quoted one gives its req_… id.
    fragment = (FIXTURES / "anthropic" / "BerriAI__litellm__issue4562_error_event_FRAGMENT.txt").read_bytes()
    pieces = [*sse_events(fragment), b"event: error\ndata: " + ANTHROPIC_ERROR + b"\n\n"]
    result = replay_stamped(get_protocol("anthropic"), pieces)
    assert result.error_kind == "stream_error" and result.request_id == "req_011CYeT1GYt7Kg27RdtV9zeo"


def test_an_anthropic_error_event_id_beats_the_message_id():
    stream = (FIXTURES / "anthropic" / "pydantic__pydantic-ai__sonnet45_short_text.txt").read_bytes()
    pieces = [*sse_events(stream)[:3], b"event: error\ndata: " + ANTHROPIC_ERROR + b"\n\n"]
    assert replay_stamped(get_protocol("anthropic"), pieces).request_id == "req_011CYeT1GYt7Kg27RdtV9zeo"


def test_an_http_error_body_names_its_request():
    assert get_protocol("anthropic").error_request_id(ANTHROPIC_ERROR) == "req_011CYeT1GYt7Kg27RdtV9zeo"
    openai_5xx = b'{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}'
    for body in (openai_5xx, b"<html>502 Bad Gateway</html>", b"", b"[1]", b'{"request_id": 7}'):
        assert get_protocol("openai-chat").error_request_id(body) is None


def test_a_recorded_header_beats_the_body_id():
    """Anthropic's `request-id` header (a published api.anthropic.com response) over the message id."""
    headers = read_headers(ROOT / "route_headers" / "anthropic_messages.headers.txt")
    result = replay_file("anthropic/simonw__llm-anthropic__sonnet45_prompt.txt", headers=headers)
    assert result.request_id == "req_011CSLsW7mFqvHHnzrKdKjAE"


@pytest.mark.parametrize(
    ("protocol", "own", "other"),
    [
        ("openai-chat", "x-request-id", None),
        ("openai-responses", "x-request-id", None),
        ("anthropic", "request-id", "x-request-id"),
        ("azure-openai", "apim-request-id", "x-request-id"),
        ("bedrock-converse", "x-amzn-requestid", "x-amzn-request-id"),
        ("gemini", "x-goog-request-id", "x-request-id"),
        ("ollama", "x-request-id", None),
    ],
)
def test_each_protocol_reads_its_own_header_first(protocol: str, own: str, other: str | None):
    wire = get_protocol(protocol)
    headers = {own.upper(): "own-id", **({other: "other-id"} if other else {})}  # any case, as on the wire
    assert wire.request_id(headers, "body-id") == "own-id"
    if other:
        assert wire.request_id({other: "other-id"}, "body-id") == "other-id"
    assert wire.request_id({}, "body-id") == "body-id"
    assert wire.request_id({}, None) is None
    assert wire.request_id({own: " " * 3}, None) is None  # blank is no id
    assert wire.request_id({own: "r" * 10_000}, None) == "r" * 200  # a hostile header cannot bloat rows


def test_behind_litellm():
    """The recorded LiteLLM proxy stream: its headers name no provider id, so the upstream's chunk
    id stands. LiteLLM forwards the upstream's headers as `llm_provider-*` (its docs) and sends its
    own `x-litellm-call-id` (removed from the recording): the forwarded id wins, the call id is last."""
    headers = read_headers(LITELLM / "llama-70b.headers.txt")
    body = (LITELLM / "llama-70b.body.txt").read_bytes()
    wire = get_protocol("openai-chat")
    assert replay(wire, [(0, body)], headers=headers).request_id == "c1"
    call_id = {**headers, "x-litellm-call-id": "1f7f4c3e-litellm"}
    assert replay(wire, [(0, body)], headers=call_id).request_id == "c1"
    forwarded = {**call_id, "llm_provider-x-request-id": "req_upstream"}
    assert replay(wire, [(0, body)], headers=forwarded).request_id == "req_upstream"
    assert wire.request_id(call_id, None) == "1f7f4c3e-litellm"
    bedrock = get_protocol("bedrock-converse")
    assert bedrock.request_id({**call_id, "llm_provider-x-amzn-requestid": "aws-1"}, None) == "aws-1"
