"""A prompt that asks for what its provider's protocol cannot express is a config error naming
the provider (issue 16): the protocol module declares `supports_response_format`."""

from __future__ import annotations

import json

import pytest

from monitor.config import ConfigError, load_config_text
from monitor.protocols import base
from monitor.protocols.openai_chat import OpenAIChat


@pytest.fixture
def plain_text_protocol():
    class PlainText(OpenAIChat):  # a wire protocol with no way to ask for JSON
        name = "plain-text"
        supports_response_format = False

    base.register(PlainText)
    yield "plain-text"
    base._REGISTRY.pop("plain-text")


def config(protocol: str, response_format: bool) -> str:
    prompt = {"messages": [{"role": "user", "content": "hi"}]}
    if response_format:
        prompt["response_format"] = {"json_schema": {"type": "object"}}
    return json.dumps(
        {
            "providers": {"local": {"protocol": protocol, "regions": {"r": "http://127.0.0.1:1"}, "models": ["m"]}},
            "prompts": {"p": prompt},
            "checks": [{"providers": ["local"], "prompts": ["p"]}],
        }
    )


def test_response_format_on_a_protocol_that_cannot_express_it(plain_text_protocol, tmp_path) -> None:
    with pytest.raises(ConfigError) as exc:
        load_config_text(config(plain_text_protocol, True), base_dir=tmp_path, env={})
    assert str(exc.value).strip() == (
        "checks[0]: prompt 'p' has response_format, which provider 'local' (protocol plain-text) cannot express"
    )
    assert load_config_text(config(plain_text_protocol, False), base_dir=tmp_path, env={}).targets


@pytest.mark.parametrize("protocol", ["openai-chat", "anthropic", "gemini", "ollama", "openai-responses"])
def test_builtin_protocols_take_response_format(protocol: str, tmp_path) -> None:
    assert load_config_text(config(protocol, True), base_dir=tmp_path, env={}).targets
