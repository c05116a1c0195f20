"""The simulated wire protocols, found by request path as real providers route them."""

from __future__ import annotations

from monitor.simulator.wire.anthropic import AnthropicEncoder
from monitor.simulator.wire.azure_openai import AzureOpenAIEncoder
from monitor.simulator.wire.base import Call, Outcome, StreamInfo, WireEncoder
from monitor.simulator.wire.bedrock import BedrockEncoder
from monitor.simulator.wire.gemini import GeminiEncoder
from monitor.simulator.wire.ollama import OllamaEncoder
from monitor.simulator.wire.openai_chat import OpenAIChatEncoder
from monitor.simulator.wire.openai_responses import OpenAIResponsesEncoder

ENCODERS: tuple[type[WireEncoder], ...] = (
    OpenAIChatEncoder,
    AzureOpenAIEncoder,
    OpenAIResponsesEncoder,
    AnthropicEncoder,
    GeminiEncoder,
    BedrockEncoder,
    OllamaEncoder,
)
BY_PROTOCOL = {cls.protocol: cls for cls in ENCODERS}


def find_route(method: str, path: str) -> tuple[type[WireEncoder], dict[str, str]] | None:
    """The protocol serving `path` (any method) and its path parameters."""
    for cls in ENCODERS:
        params = cls.route(method, path)
        if params is not None:
            return cls, params
    return None


__all__ = ["BY_PROTOCOL", "ENCODERS", "Call", "Outcome", "StreamInfo", "WireEncoder", "find_route"]
