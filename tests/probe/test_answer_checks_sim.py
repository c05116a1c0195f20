"""Answer checks, tool calls and structured output through every protocol, against the simulator.

Each protocol's request carries the prompt's tools / response_format in its own wire
shape; the simulator reads that shape back, answers with a tool call or a JSON document
fitting the schema, and the probe assembles and checks it. Every `expect` kind is shown
to pass on a fitting answer and to fail (error_kind assertion, failed_check named,
timings kept) on one that does not fit.
"""

from __future__ import annotations

import json

import pytest

from monitor.config import load_config_text
from monitor.sample import Sample
from tests.conftest import BASE_PATH
from tests.probe.test_runner import probe_all

PROTOCOLS = ("openai-chat", "openai-responses", "azure-openai", "anthropic", "gemini", "bedrock-converse", "ollama")
MODEL = "sim:ttft=5:itl=1:tokens=30:jitter=0"
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
CLOCK = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}}
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "score": {"type": "integer", "minimum": 1}},
    "required": ["answer", "score"],
}
QUESTION = [{"role": "user", "content": "What is the weather in Paris?"}]

# prompt name -> (prompt spec, expected failed_check or None)
PROMPTS = {
    "tool-ok": ({"tools": [WEATHER], "tool_choice": {"name": "get_weather"}, "expect": {"tool": "get_weather"}}, None),
    "tool-args-ok": (
        {
            "tools": [WEATHER],
            "tool_choice": "required",
            "expect": {"tool": {"name": "get_weather", "arguments": WEATHER["function"]["parameters"]}},
        },
        None,
    ),
    "tool-wrong-name": (
        {"tools": [WEATHER, CLOCK], "tool_choice": {"name": "get_weather"}, "expect": {"tool": "get_time"}},
        "tool",
    ),
    "tool-bad-args": (
        {
            "tools": [WEATHER],
            "tool_choice": "required",
            "expect": {"tool": {"name": "get_weather", "arguments": {"required": ["country"]}}},
        },
        "tool",
    ),
    "tool-none-called": ({"tools": [WEATHER], "tool_choice": "none", "expect": {"tool": "get_weather"}}, "tool"),
    "json-ok": (
        {"response_format": {"json_schema": ANSWER_SCHEMA}, "expect": {"json_schema": ANSWER_SCHEMA}},
        None,
    ),
    "json-mismatch": (
        {
            "response_format": {"json_schema": ANSWER_SCHEMA},
            "expect": {"json_schema": {"type": "object", "properties": {"score": {"type": "string"}}}},
        },
        "json_schema",
    ),
    "json-not-json": ({"expect": {"json_schema": ANSWER_SCHEMA}}, "json_schema"),
    "contains-ok": ({"expect": {"contains": ["first token", "model"]}}, None),
    "contains-missing": ({"expect": {"contains": "banana"}}, "contains"),
    "not-contains-ok": ({"expect": {"not_contains": ["banana"]}}, None),
    "not-contains-hit": ({"expect": {"not_contains": "first token"}}, "not_contains"),
    "regex-ok": ({"expect": {"regex": "^The time to first token"}}, None),
    "regex-miss": ({"expect": {"regex": "^[0-9]+$"}}, "regex"),
    "max-chars-ok": ({"expect": {"max_chars": 1000}}, None),
    "max-chars-over": ({"expect": {"max_chars": 20}}, "max_chars"),
    "min-tokens-ok": ({"expect": {"min_tokens": 10}}, None),
    "min-tokens-under": ({"expect": {"min_tokens": 500}}, "min_tokens"),
}


def _config(simulator) -> str:
    providers = {
        protocol.replace("-", "_"): {
            "protocol": protocol,
            "api_key": "sk-test-key",
            "regions": {"local": simulator.base_url + BASE_PATH[protocol]},
            "models": [MODEL],
        }
        for protocol in PROTOCOLS
    }
    prompts = {name: {"messages": QUESTION, "max_tokens": 200, **spec} for name, (spec, _) in PROMPTS.items()}
    checks = [{"providers": sorted(providers), "prompts": sorted(prompts), "ttft_timeout": "5s", "timeout": "10s"}]
    return json.dumps({"providers": providers, "prompts": prompts, "checks": checks})


@pytest.fixture(scope="module")
def samples(simulator, tmp_path_factory) -> dict[tuple[str, str], Sample]:
    config = load_config_text(_config(simulator), base_dir=tmp_path_factory.mktemp("cfg"), env={})
    protocol_of = {name.replace("-", "_"): name for name in PROTOCOLS}
    out = probe_all(list(config.targets), concurrency=16)
    return {(protocol_of[s.provider], s.prompt): s for s in out}


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("prompt", sorted(PROMPTS))
def test_expect_passes_and_fails(samples, protocol: str, prompt: str) -> None:
    sample = samples[(protocol, prompt)]
    expected = PROMPTS[prompt][1]
    # Timings are kept either way: the stream itself was fine.
    assert sample.ttft_ms is not None and sample.total_ms is not None and sample.http_status == 200
    if expected is None:
        assert sample.ok, (sample.error_kind, sample.error_message)
        assert sample.failed_check is None
    else:
        assert not sample.ok
        assert (sample.error_kind, sample.failed_check) == ("assertion", expected), sample.error_message
        assert sample.error_message.startswith(f"{expected}: ")
        assert len(sample.error_message) <= 260


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_tool_call_first_token_is_ttft(samples, simulator, protocol: str) -> None:
    sample = samples[(protocol, "tool-ok")]
    truth = simulator.truth(sample.request_id)
    true_ttft_ms = (truth["first_token_ns"] - truth["arrival_ns"]) / 1e6
    # The tool call is the first (and only) output: ttft_ms is when it began, and no answer text came.
    assert sample.ttft_ms >= true_ttft_ms and sample.ttft_answer_ms is None
    assert sample.output_tokens == truth["token_count"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_prompt_size_is_echoed_in_o200k_tokens(samples, protocol: str) -> None:
    from monitor.probe.tokens import count_o200k

    sample = samples[(protocol, "contains-ok")]
    # the question plus the nonce "[1a2b3c4d] " prefix, counted by the simulator with o200k
    expected = count_o200k("[00000000] " + QUESTION[0]["content"])
    assert sample.input_tokens is not None and abs(sample.input_tokens - expected) <= 5
