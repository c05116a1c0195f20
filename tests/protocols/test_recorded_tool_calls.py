"""Tool calls in recorded real streams: assembled per call, and judged by `expect.tool`.

The four recordings with tool calls (OpenAI chat, Responses, Anthropic, Gemini's
JSON array) are replayed event by event; the assembled call must be the one the
provider streamed, the first tool token must set ttft_ms (the event index is read
off the file by hand), and `expect` must pass on the real call and fail on a wrong
name, on arguments that miss their schema, and on text checks the call cannot meet.
"""

from __future__ import annotations

import json

import pytest

from monitor.config import Expect, ToolExpect
from monitor.probe.checks import evaluate
from monitor.protocols import get_protocol

from .recorded import FIXTURES, replay_stamped, split_events

# folder, file, protocol, event index of the first tool token, (name, arguments), output tokens
CASES = [
    (
        "openai_chat",
        "pydantic__pydantic-ai__gpt-4o-mini_tool_call_include_usage.txt",
        "openai-chat",
        0,
        ("get_capital", {"country": "UK"}),
        15,
    ),
    (
        "openai_responses",
        "pydantic__pydantic-ai__responses_stream_tool_call.txt",
        "openai-responses",
        2,
        ("get_capital", {"country": "France"}),
        16,
    ),
    # the tool_use block start (1) names the tool; its only input_json_delta is empty: no arguments
    (
        "anthropic",
        "simonw__llm-anthropic__haiku45_tool_calls_gzip.txt",
        "anthropic",
        1,
        ("pelican_name_generator", {}),
        40,
    ),
    (
        "gemini",
        "simonw__llm-gemini__gemini3_flash_json_array_tool_call.txt",
        "gemini",
        0,
        ("multiply", {"y": 3, "x": 5}),
        None,
    ),
]
IDS = [c[0] for c in CASES]


def _replay(folder: str, file: str, protocol: str):
    raw = (FIXTURES / folder / file).read_bytes()
    return replay_stamped(get_protocol(protocol), split_events(folder, raw))


@pytest.mark.parametrize(("folder", "file", "protocol", "first", "call", "tokens"), CASES, ids=IDS)
def test_tool_call_is_assembled(folder, file, protocol, first, call, tokens) -> None:
    result = _replay(folder, file, protocol)
    assert result.ok, result.error_message
    assert result.metrics.ttft_ms == first
    assert result.metrics.ttft_answer_ms is None  # no answer text at all
    if tokens is not None:
        assert result.metrics.output_tokens == tokens
    (assembled,) = result.answer.tool_calls
    assert assembled.name == call[0]
    assert json.loads(assembled.arguments or "{}") == call[1]


@pytest.mark.parametrize(("folder", "file", "protocol", "first", "call", "tokens"), CASES, ids=IDS)
def test_expect_tool_passes_and_fails(folder, file, protocol, first, call, tokens) -> None:
    result = _replay(folder, file, protocol)
    name, args = call
    props = {
        key: {"type": type(value).__name__.replace("str", "string").replace("int", "integer")}
        for key, value in args.items()
    }
    fitting = {"type": "object", "properties": props, "required": sorted(args), "additionalProperties": False}

    def check(expect: Expect):
        return evaluate(expect, result.answer, result.metrics.output_tokens, result.metrics.reasoning_tokens)

    assert check(Expect(tool=ToolExpect(name))) is None
    assert check(Expect(tool=ToolExpect(name, fitting))) is None
    wrong = check(Expect(tool=ToolExpect("other_function")))
    assert wrong.check == "tool" and 'expected "other_function"' in wrong.reason
    missing = check(Expect(tool=ToolExpect(name, {"type": "object", "required": ["nonexistent"]})))
    assert missing.check == "tool" and "(rule 'required')" in missing.reason
    # A tool-only answer has no text: text checks see the empty answer.
    assert check(Expect(contains=("capital",))).check == "contains"
    assert check(Expect(json_schema={"type": "object"})).check == "json_schema"
    assert check(Expect(not_contains=("capital",), max_chars=0)) is None
