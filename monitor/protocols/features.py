"""What a prompt asks beyond its messages, in protocol-neutral form, and the helpers every
protocol module uses to put it in its own wire shape (tools, structured output, reasoning)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class JsonSchemaFormat:
    """Structured output: the answer must be JSON matching `schema`."""

    schema: Mapping[str, Any] = field(hash=False)
    name: str = "answer"
    strict: bool = True


@dataclass(frozen=True, slots=True)
class ReasoningSetting:
    """An effort level (low|medium|high) or a thinking budget in tokens; exactly one is set."""

    effort: str | None = None
    budget_tokens: int | None = None


# Where an API takes only a token budget, an effort maps to these (and back, by nearest).
# Anthropic's minimum budget is 1,024; the values follow Gemini's and OpenRouter's own mapping
# of effort to a share of a ~16k thinking allowance.
EFFORT_BUDGET_TOKENS = {"low": 1024, "medium": 8192, "high": 24576}


def reasoning_budget(setting: ReasoningSetting) -> int:
    if setting.budget_tokens is not None:
        return setting.budget_tokens
    return EFFORT_BUDGET_TOKENS.get(setting.effort or "medium", EFFORT_BUDGET_TOKENS["medium"])


def reasoning_effort(setting: ReasoningSetting) -> str:
    if setting.effort is not None:
        return setting.effort
    budget = setting.budget_tokens or 0
    return min(EFFORT_BUDGET_TOKENS, key=lambda e: abs(EFFORT_BUDGET_TOKENS[e] - budget))


def tool_functions(tools: tuple[Mapping[str, Any], ...]) -> list[Mapping[str, Any]]:
    """The `function` objects of OpenAI-style tool definitions (name, description?, parameters?)."""
    return [t["function"] for t in tools if isinstance(t.get("function"), Mapping)]


def tool_parameters(fn: Mapping[str, Any]) -> Mapping[str, Any]:
    return fn.get("parameters") or {"type": "object", "properties": {}}


def forced_tool(tool_choice: str | Mapping[str, Any] | None) -> str | None:
    """The function a `{name: fn}` tool_choice forces, else None."""
    return str(tool_choice["name"]) if isinstance(tool_choice, Mapping) and tool_choice.get("name") else None
