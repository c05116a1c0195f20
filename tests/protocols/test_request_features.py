"""Tools, tool_choice, structured output, reasoning and temperature in each protocol's wire shape."""

from __future__ import annotations

import json

import pytest

from monitor.protocols import get_protocol
from monitor.protocols.base import JsonSchemaFormat, Message, ProbeRequest, ReasoningSetting

FN = {"name": "get_weather", "description": "Weather", "parameters": {"type": "object", "properties": {}}}
SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}}


def body(protocol: str, model: str = "m", **features) -> dict:
    req = ProbeRequest(
        base_url="http://127.0.0.1:1",
        model=model,
        messages=(Message("user", "hi"),),
        max_tokens=64,
        api_key="k",
        **features,
    )
    return json.loads(get_protocol(protocol).build_request(req).body)


ALL = dict(
    temperature=0.0,
    tools=({"type": "function", "function": FN},),
    tool_choice={"name": "get_weather"},
    response_format=JsonSchemaFormat(SCHEMA, "answer", True),
    reasoning=ReasoningSetting(effort="low"),
)


@pytest.mark.parametrize("protocol", ["openai-chat", "azure-openai"])
def test_chat_completions(protocol: str) -> None:
    b = body(protocol, **ALL)
    assert b["temperature"] == 0.0 and b["tools"] == [{"type": "function", "function": FN}]
    assert b["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert b["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": SCHEMA, "strict": True},
    }
    assert b["reasoning_effort"] == "low"
    assert body(protocol, reasoning=ReasoningSetting(budget_tokens=20_000))["reasoning_effort"] == "high"
    assert body(protocol, tools=ALL["tools"], tool_choice="required")["tool_choice"] == "required"


def test_responses() -> None:
    b = body("openai-responses", **ALL)
    assert b["tools"] == [
        {"type": "function", "name": "get_weather", "parameters": FN["parameters"], "description": "Weather"}
    ]
    assert b["tool_choice"] == {"type": "function", "name": "get_weather"}
    assert b["text"] == {"format": {"type": "json_schema", "name": "answer", "schema": SCHEMA, "strict": True}}
    assert b["reasoning"] == {"effort": "low"} and b["temperature"] == 0.0


def test_anthropic() -> None:
    b = body("anthropic", **ALL)
    assert b["tools"] == [{"name": "get_weather", "input_schema": FN["parameters"], "description": "Weather"}]
    assert b["tool_choice"] == {"type": "tool", "name": "get_weather"}
    assert body("anthropic", tools=ALL["tools"], tool_choice="required")["tool_choice"] == {"type": "any"}
    assert b["output_config"] == {"format": {"type": "json_schema", "schema": SCHEMA}}
    # effort low -> 1,024 budget tokens; the answer keeps its own max_tokens on top
    assert b["thinking"] == {"type": "enabled", "budget_tokens": 1024} and b["max_tokens"] == 64 + 1024


def test_gemini() -> None:
    b = body("gemini", **ALL)
    assert b["tools"] == [
        {"functionDeclarations": [{"name": "get_weather", "parameters": FN["parameters"], "description": "Weather"}]}
    ]
    assert b["toolConfig"] == {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}}
    config = b["generationConfig"]
    assert config["responseMimeType"] == "application/json" and config["responseSchema"] == SCHEMA
    assert config["thinkingConfig"] == {"thinkingBudget": 1024} and config["temperature"] == 0.0
    assert body("gemini", reasoning=ReasoningSetting(budget_tokens=0))["generationConfig"]["thinkingConfig"] == {
        "thinkingBudget": 0
    }


def test_bedrock_converse() -> None:
    b = body("bedrock-converse", model="anthropic.claude-3-7-sonnet", **ALL)
    spec = {"name": "get_weather", "inputSchema": {"json": FN["parameters"]}, "description": "Weather"}
    assert b["toolConfig"] == {"tools": [{"toolSpec": spec}], "toolChoice": {"tool": {"name": "get_weather"}}}
    fmt = b["outputConfig"]["textFormat"]
    assert fmt["type"] == "json_schema" and json.loads(fmt["structure"]["jsonSchema"]["schema"]) == SCHEMA
    assert b["additionalModelRequestFields"] == {"thinking": {"type": "enabled", "budget_tokens": 1024}}
    assert b["inferenceConfig"] == {"maxTokens": 64 + 1024, "temperature": 0.0}
    other = body("bedrock-converse", model="openai.gpt-oss-120b-1:0", reasoning=ReasoningSetting(effort="high"))
    assert other["additionalModelRequestFields"] == {"reasoning_effort": "high"}
    assert "toolConfig" not in body("bedrock-converse", tools=ALL["tools"], tool_choice="none")


def test_ollama() -> None:
    b = body("ollama", **ALL)
    assert b["tools"] == [{"type": "function", "function": FN}] and b["format"] == SCHEMA
    assert b["think"] == "low" and b["options"]["temperature"] == 0.0
    assert "tools" not in body("ollama", tools=ALL["tools"], tool_choice="none")


@pytest.mark.parametrize(
    "protocol", ["openai-chat", "openai-responses", "anthropic", "gemini", "bedrock-converse", "ollama"]
)
def test_plain_prompts_are_unchanged(protocol: str) -> None:
    b = body(protocol)
    for key in ("tools", "tool_choice", "response_format", "text", "thinking", "toolConfig", "format", "temperature"):
        assert key not in b
    assert "thinkingConfig" not in b.get("generationConfig", {})


def test_every_builtin_protocol_can_express_response_format() -> None:
    from monitor.protocols.base import protocol_names

    assert all(get_protocol(name).supports_response_format for name in protocol_names())
