"""Every recorded real stream in tests/fixtures/streams/ measures to what its provider reported.

Method: each file is cut into its events (SSE by blank line, NDJSON by line,
a Gemini JSON array by element, Bedrock by frame) and event k is fed as a
read stamped k ms, so `ttft_ms == k` names the exact event that carried the
first token. The expected indexes below were read off the files by hand
(SOURCES.md describes them); they are not computed with the parsers.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

import pytest

from monitor.protocols import get_protocol
from monitor.protocols.base import TokenKind

from .recorded import FIXTURES, eventstream_frames, replay_stamped, split_events, sse_events, text_by_kind

SKIP = object()  # a field this file cannot show (a fragment's end)


PROTOCOL_OF_FOLDER = {
    "anthropic": "anthropic",
    "gemini": "gemini",
    "openai_responses": "openai-responses",
    "bedrock": "bedrock-converse",
    "ollama": "ollama",
    "openai_chat": "openai-chat",
    "openai_compatible": "openai-chat",
    "azure_openai": "azure-openai",
}


@dataclass(frozen=True)
class Case:
    folder: str
    file: str
    output_tokens: int | None  # from usage; None: no usage, an estimate
    ttft: int | None  # index of the event carrying the first token of any kind
    answer: int | None  # index of the event carrying the first visible answer text
    total: Any  # index of the terminal event
    input_tokens: int | None = None
    reasoning_tokens: int | None = None
    error: str | None = None  # "error_kind: error_message"
    timing: dict[str, Any] = field(default_factory=dict)  # expected server_timing entries

    @property
    def protocol(self) -> str:
        return PROTOCOL_OF_FOLDER[self.folder]


# fmt: off
CASES = [
    # --- anthropic: ping, message_start and content_block_start are never tokens
    Case("anthropic", "BerriAI__litellm__issue4562_error_event_FRAGMENT.txt", None, 0, 0, SKIP,
         error="stream_error: api_error: Internal server error"),
    # two redacted_thinking blocks (1, 3) and three pings (4, 6, 8): first text at 9
    Case("anthropic", "pydantic__pydantic-ai__redacted_thinking.txt", 189, 9, 9, 26, 92),
    Case("anthropic", "pydantic__pydantic-ai__sonnet45_short_text.txt", 5, 3, 3, 6, 20),
    # thinking from 3; empty thinking_delta (16) and signature (17); text block 19, first text 20
    Case("anthropic", "pydantic__pydantic-ai__sonnet4_thinking_signature.txt", 282, 3, 20, 117, 43),
    # tool_use block start (1) names the tool; its only input_json_delta (3) is empty
    Case("anthropic", "simonw__llm-anthropic__haiku45_tool_calls_gzip.txt", 40, 1, None, 6, 543),
    # "\n\n" text delta at 3 is a token but not visible; thinking 6-12; first real text "1" at 17
    Case("anthropic", "simonw__llm-anthropic__opus46_adaptive_thinking.txt", 44, 3, 17, 28, 34),
    Case("anthropic", "simonw__llm-anthropic__sonnet45_prompt.txt", 10, 3, 3, 9, 17),
    Case("anthropic", "simonw__llm-anthropic__sonnet45_thinking_prompt.txt", 84, 3, 35, 40, 46),

    # --- gemini: output = candidatesTokenCount + thoughtsTokenCount of the LAST usageMetadata
    Case("gemini", "pydantic__pydantic-ai__gemini-2.0-flash_sse.txt", 8, 0, 0, 2, 13),
    Case("gemini", "pydantic__pydantic-ai__gemini-2.5-flash_usage_mid_stream.txt", 80 + 35, 0, 0, 2, 18, 35),
    # four thought parts (0-3), answer from 4
    Case("gemini", "pydantic__pydantic-ai__gemini-2.5-pro_thoughts_sse.txt", 469 + 787, 0, 4, 22, 34, 787),
    Case("gemini", "pydantic__pydantic-ai__vertex_flex_stream.txt", 1 + 100, 0, 0, 0, 5, 100),
    # JSON array: thought (0), "Scoop" (1), empty text with signature + finishReason (2)
    Case("gemini", "simonw__llm-gemini__flash-latest_json_array_stream.txt", 2 + 291, 0, 1, 2, 11, 291),
    Case("gemini", "simonw__llm-gemini__gemini3_flash_json_array_tool_call.txt", 16 + 32, 0, None, 1, 60, 32),

    # --- openai-responses: created / in_progress / *.added are not tokens
    # a comment event (0), reasoning_text from 5, output_text at 33, completed 40, [DONE] 41
    Case("openai_responses", "pydantic__pydantic-ai__openrouter_responses_raw_cot.txt", 37, 5, 33, 40, 78, 22),
    Case("openai_responses", "pydantic__pydantic-ai__responses_reasoning_thinking_iter.txt",
         1680, 4, 401, 675, 13, 1408),
    Case("openai_responses", "pydantic__pydantic-ai__responses_stream_text.txt", 9, 4, 4, 14, 278, 0),
    # output_item.added of the function_call (2) carries the generated name
    Case("openai_responses", "pydantic__pydantic-ai__responses_stream_tool_call.txt", 16, 2, None, 10, 255, 0),
    # encrypted reasoning item (2, 3) is no token; the function call's name at 4 is
    Case("openai_responses", "pydantic__pydantic-ai__responses_streaming_usage.txt", 469, 4, None, 13, 53, 448),

    # --- bedrock-converse: frames; the terminal is metadata
    Case("bedrock", "pydantic__pydantic-ai__converse_stream_claude_thinking.bin", 73, 1, 17, 24, 36,
         timing={"latencyMs": 1999}),
    # frame 1 is an empty text delta: reasoning at 3, text at 5
    Case("bedrock", "pydantic__pydantic-ai__converse_stream_gpt-oss_empty_delta.bin", 43, 3, 5, 9, 70,
         timing={"latencyMs": 753}),
    Case("bedrock", "pydantic__pydantic-ai__converse_stream_nova-micro.bin", 82, 1, 1, 32, 13,
         timing={"latencyMs": 522}),

    # --- ollama: the done:true line is the terminal; durations arrive in ns
    Case("ollama", "attogram__ollama-bash-lib__generate_dolphin3_8b_cold_load.ndjson", 37, 0, 0, 36, 31,
         timing={"load_ms": 1667.0406, "eval_ms": 824.1115, "total_ms": 2609.0285, "prompt_eval_ms": 116.817}),
    Case("ollama", "attogram__ollama-bash-lib__generate_dolphin3_8b_warm.ndjson", 31, 0, 0, 30, 31,
         timing={"load_ms": 27.9629, "prompt_eval_ms": 2.0962, "eval_ms": 703.5992}),
    Case("ollama", "blog-post-unknown-repo__chat_llama3.2_windows.ndjson", 33, 0, 0, 32, 26,
         timing={"load_ms": 63.5477, "prompt_eval_ms": 1447.0, "eval_ms": 2800.0, "total_ms": 4323.8761}),
    Case("ollama", "llm-zoomcamp-student-fork__chat_gemma2b_cold_docker.ndjson", 24, 0, 0, 17, 33,
         timing={"load_ms": 36800.314956, "prompt_eval_ms": 12351.303}),

    # --- openai-chat: role-only first chunks are not tokens
    # the role chunk (0) already carries the tool call's name
    Case("openai_chat", "pydantic__pydantic-ai__gpt-4o-mini_tool_call_include_usage.txt", 15, 0, None, 8, 53),
    Case("openai_chat", "pydantic__pydantic-ai__gpt-4o_include_usage.txt", 8, 1, 1, 11, 14),
    Case("openai_chat", "pydantic__pydantic-ai__gpt-5_include_usage_moderation.txt", 11, 1, 1, 6, 13, 0),
    # filter-only chunk (0), role chunk (1), "Hallo" at 2; no usage
    Case("azure_openai", "quarkiverse__quarkus-langchain4j__gpt-4o_azure_stream.txt", None, 2, 2, 6),
    Case("openai_compatible", "pydantic__pydantic-ai__crusoe_streaming.txt", 14, 1, 1, 16, 46),
    # reasoning_content from 1, content from 199; usage on the finish chunk
    Case("openai_compatible", "pydantic__pydantic-ai__deepseek_reasoner_reasoning_content.txt",
         212, 1, 199, 211, 6, 198),
    Case("openai_compatible", "pydantic__pydantic-ai__groq_stream.txt", 49, 1, None, 25, 304, 23,
         timing={"groq": {"queue_time": 0.00491786, "prompt_time": 0.01460151, "completion_time": 0.11216431,
                          "total_time": 0.12676582}}),
    Case("openai_compatible", "pydantic__pydantic-ai__hf_router_novita.txt", 2, 1, 1, 4, 40,
         timing={"sla_metrics": {"ttft_ms": 274}}),
    # "<think>" at 0 is reasoning; "</think>" at 311, a bare "\n" at 312, "Cross" at 313
    Case("openai_compatible", "pydantic__pydantic-ai__hf_router_together_thinking.txt", 955, 0, 313, 955, 10),
    # two empty deltas (0, 1), typed thinking parts from 2, string content from 60
    Case("openai_compatible", "pydantic__pydantic-ai__mistral_magistral_thinking.txt", 232, 2, 60, 158, 10),
    # 17 keep-alive comments (0-16), reasoning at 17, then an error object with usage
    Case("openai_compatible", "pydantic__pydantic-ai__openrouter_stream_error.txt", 10, 17, None, SKIP, 43, 11,
         error="stream_error: 400: Token limit reached"),
    # comments at 0, 1, 5, 6; role chunks with reasoning null (2, 3); "This" at 4; "2 " at 13
    Case("openai_compatible", "pydantic__pydantic-ai__openrouter_streaming_reasoning.txt", 36, 4, 13, 18, 43, 13),
    Case("openai_compatible", "pydantic__pydantic-ai__zai_glm_thinking.txt", 564, 0, 90, 93, 13, 561),
    # FRAGMENT: only the tail; llama.cpp's own predicted_n stands in for usage
    Case("openai_compatible", "unknown-repo__llamacpp_b6925_gpt-oss_tail_FRAGMENT.txt", 2188, 0, 0, 2, 58 + 89,  # prompt_n evaluated + cache_n reused
         timing={"llamacpp": {"predicted_per_second": 167.0865467074863, "cache_n": 89}}),
    # ABRIDGED: role chunk (content null) and stop chunk only, single-newline framing;
    # [DONE] is dispatched when the body ends (read 2)
    Case("openai_compatible", "unknown-repo__llamacpp_b9020_gemma4_ABRIDGED.txt", 81, None, None, 2, 20,
         timing={"llamacpp": {"predicted_n": 81, "prompt_ms": 148.2}}),
]
# fmt: on


def _id(case: Case) -> str:
    return f"{case.folder}/{case.file[:48]}"


def _load(case: Case) -> tuple[bytes, list[bytes]]:
    raw = (FIXTURES / case.folder / case.file).read_bytes()
    return raw, split_events(case.folder, raw)


def test_every_recorded_stream_is_in_the_table():
    on_disk = {(p.parent.name, p.name) for p in FIXTURES.glob("*/*") if p.is_file()}
    assert on_disk == {(c.folder, c.file) for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_recorded_stream_measures_what_the_provider_reported(case: Case):
    raw, pieces = _load(case)
    assert b"".join(pieces) == raw
    result = replay_stamped(get_protocol(case.protocol), pieces)
    m = result.metrics

    assert m.ttft_ms == case.ttft
    assert m.ttft_answer_ms == case.answer
    if case.total is not SKIP:
        assert m.finished
        assert m.total_ms == case.total
    if case.output_tokens is None:
        assert m.tokens_source == "estimate"
        assert m.output_tokens > 0
    else:
        assert (m.output_tokens, m.tokens_source) == (case.output_tokens, "usage")
    if case.input_tokens is not None:
        assert m.input_tokens == case.input_tokens
    if case.reasoning_tokens is not None:
        assert m.reasoning_tokens == case.reasoning_tokens
    for key, value in case.timing.items():
        if isinstance(value, dict):
            assert {k: m.server_timing[key][k] for k in value} == value
        else:
            assert m.server_timing[key] == pytest.approx(value)
    if case.error is None:
        assert result.ok, result.error_message
    else:
        kind, _, message = case.error.partition(": ")
        assert (str(result.error_kind), result.error_message) == (kind, message)


def test_azure_stream_without_usage_estimates_within_15_percent():
    # OpenAI streams one token per content chunk: "Hallo", " Welt", "!" are 3 tokens.
    case = next(c for c in CASES if c.folder == "azure_openai")
    m = replay_stamped(get_protocol(case.protocol), _load(case)[1]).metrics
    assert m.tokens_source == "estimate"
    assert abs(m.output_tokens - 3) <= 0.15 * 3


def _summary(result) -> tuple:
    m = result.metrics
    return (
        m.output_tokens,
        m.tokens_source,
        m.input_tokens,
        m.reasoning_tokens,
        m.cache_read_tokens,
        m.chunks,
        m.model_version,
        m.server_timing,
        m.finished,
        result.error_kind,
        result.error_message,
    )


def _small(case: Case) -> bool:
    return (FIXTURES / case.folder / case.file).stat().st_size < 40_000


@pytest.mark.parametrize("case", [c for c in CASES if _small(c)], ids=_id)
def test_byte_at_a_time_equals_whole_body(case: Case):
    raw, _ = _load(case)
    protocol = get_protocol(case.protocol)
    whole = replay_stamped(protocol, [raw])
    single_bytes = [raw[i : i + 1] for i in range(len(raw))]
    assert _summary(replay_stamped(protocol, single_bytes)) == _summary(whole)
    assert text_by_kind(protocol, single_bytes) == text_by_kind(protocol, [raw])


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_random_read_boundaries_equal_whole_body(case: Case):
    raw, _ = _load(case)
    protocol = get_protocol(case.protocol)
    rng = random.Random(case.file)
    cuts = sorted(rng.sample(range(1, len(raw)), min(len(raw) - 1, len(raw) // 7)))
    reads = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    assert _summary(replay_stamped(protocol, reads)) == _summary(replay_stamped(protocol, [raw]))
    assert text_by_kind(protocol, reads) == text_by_kind(protocol, [raw])


@pytest.mark.parametrize("case", [c for c in CASES if c.folder != "bedrock"], ids=_id)
@pytest.mark.parametrize("ending", [b"\r\n", b"\n", b"\r"], ids=["crlf", "lf", "cr"])
def test_line_endings_do_not_change_the_measurement(case: Case, ending: bytes):
    raw, _ = _load(case)
    converted = raw.replace(b"\r\n", b"\n").replace(b"\n", ending)
    protocol = get_protocol(case.protocol)
    result = replay_stamped(protocol, split_events(case.folder, converted))
    assert _summary(result) == _summary(replay_stamped(protocol, [raw]))
    if ending != b"\r":  # a lone CR may be half a CRLF: the line ends with the next read
        assert (result.metrics.ttft_ms, result.metrics.ttft_answer_ms) == (case.ttft, case.answer)


def test_multibyte_characters_split_across_reads():
    raw = (FIXTURES / "ollama" / "blog-post-unknown-repo__chat_llama3.2_windows.ndjson").read_bytes()
    protocol = get_protocol("ollama")
    expected = "".join(json.loads(line)["message"]["content"] for line in raw.splitlines())
    assert "こんにちは" in expected
    first = raw.index("こ".encode())  # a 3-byte character
    for cut in (first + 1, first + 2):
        reads = [raw[:cut], raw[cut:]]
        assert text_by_kind(protocol, reads) == {"answer": expected}
        result = replay_stamped(protocol, reads)
        assert result.ok and result.metrics.ttft_ms == 1  # the first token completes in the second read
    # every read boundary inside every multi-byte character of the file
    cuts = [i for i in range(1, len(raw)) if raw[i] & 0xC0 == 0x80]
    reads = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    assert text_by_kind(protocol, reads) == {"answer": expected}


# ----------------------------------------------------- text goes to its kind
def _expected_text(case: Case, raw: bytes) -> dict[str, str]:
    """The provider's own split of the text, read straight from the JSON."""
    parts: dict[str, list[str]] = {"answer": [], "reasoning": [], "tool": []}

    def add(kind: str, text: Any) -> None:
        if isinstance(text, str):
            parts[kind].append(text)

    if case.folder == "bedrock":
        for frame in eventstream_frames(raw):
            payload = json.loads(frame[frame.index(b'{"') : -4])
            delta = payload.get("delta") or {}
            add("answer", delta.get("text"))
            add("reasoning", (delta.get("reasoningContent") or {}).get("text"))
    elif case.folder == "ollama":
        for line in raw.splitlines():
            obj = json.loads(line)
            add("answer", obj["message"]["content"] if "message" in obj else obj["response"])
    elif case.folder == "gemini":
        for piece in split_events("gemini", raw):
            text = piece.decode().strip().removeprefix("[").removeprefix(",").removesuffix("]").strip()
            chunk = json.loads(text.removeprefix("data:"))
            for part in chunk["candidates"][0]["content"]["parts"]:
                add("reasoning" if part.get("thought") else "answer", part.get("text"))
                if "functionCall" in part:
                    add("tool", part["functionCall"]["name"] + json.dumps(part["functionCall"]["args"]))
    else:
        for event in sse_events(raw):
            data = event.decode().partition("data: ")[2].strip()
            if not data or data == "[DONE]":
                continue
            _expected_from_json(case.folder, json.loads(data), add)
    texts = {kind: "".join(p) for kind, p in parts.items()}
    if texts["answer"].startswith("<think>"):  # DeepSeek-R1 on Together: reasoning inline
        head, sep, tail = texts["answer"].partition("</think>")
        texts["reasoning"], texts["answer"] = head + sep, tail
    return {kind: text for kind, text in texts.items() if text}


def _expected_from_json(folder: str, obj: dict, add) -> None:
    kind = obj.get("type")
    if folder == "anthropic":
        delta = obj.get("delta") or {}
        add("answer", delta.get("text") if delta.get("type") == "text_delta" else None)
        add("reasoning", delta.get("thinking"))
        add("tool", delta.get("partial_json"))
        if kind == "content_block_start" and obj["content_block"]["type"] == "tool_use":
            add("tool", obj["content_block"]["name"])
    elif folder == "openai_responses":
        # the `.done` events repeat each finished text whole: check the deltas against them
        if kind == "response.output_text.done":
            add("answer", obj["text"])
        elif kind in ("response.reasoning_summary_text.done", "response.reasoning_text.done"):
            add("reasoning", obj["text"])
        elif kind == "response.output_item.done" and obj["item"]["type"] == "function_call":
            add("tool", obj["item"]["name"] + obj["item"]["arguments"])
    else:
        for choice in obj.get("choices") or ():
            delta = choice.get("delta") or {}
            add("reasoning", delta.get("reasoning_content") or delta.get("reasoning"))
            content = delta.get("content")
            if isinstance(content, list):  # Mistral typed parts
                for part in content:
                    for inner in part.get("thinking") or ():
                        add("reasoning", inner["text"])
            else:
                add("answer", content)
            for call in delta.get("tool_calls") or ():
                add("tool", (call["function"].get("name") or "") + (call["function"].get("arguments") or ""))


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_text_goes_to_the_right_kind(case: Case):
    raw, pieces = _load(case)
    got = text_by_kind(get_protocol(case.protocol), pieces)
    assert got == _expected_text(case, raw)


def test_reasoning_and_answer_sizes_in_thinking_streams():
    """Sanity on volumes: thinking streams put most of their text in reasoning."""
    for file, folder, protocol in [
        ("pydantic__pydantic-ai__responses_reasoning_thinking_iter.txt", "openai_responses", "openai-responses"),
        ("pydantic__pydantic-ai__gemini-2.5-pro_thoughts_sse.txt", "gemini", "gemini"),
        ("pydantic__pydantic-ai__converse_stream_claude_thinking.bin", "bedrock", "bedrock-converse"),
        ("simonw__llm-anthropic__sonnet45_thinking_prompt.txt", "anthropic", "anthropic"),
    ]:
        raw = (FIXTURES / folder / file).read_bytes()
        got = text_by_kind(get_protocol(protocol), [raw])
        assert set(got) == {TokenKind.ANSWER.value, TokenKind.REASONING.value}, file
        assert len(got["reasoning"]) > len(got["answer"]) / 2, file
