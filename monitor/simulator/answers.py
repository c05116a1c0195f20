"""What a simulated model answers when the request asks for more than text.

A request with tools (and a tool_choice other than none) gets a tool call to the
forced function, else the first one, with arguments made up to fit its schema;
a request with a JSON Schema response format gets a JSON document fitting it.
Every wire module reads its own request shape into (tools, choice, schema) and
calls `scripted`; the stream sends the answer piece by piece like any text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Pieces that join back into exactly the text (whitespace included), about a token each.
_PIECE = re.compile(r"\s*[\w']+|\s*[^\w\s]|\s+")


@dataclass(frozen=True, slots=True)
class Scripted:
    text: str  # the answer text, or the tool call's arguments (JSON)
    tool: str | None = None  # the function called; None: `text` is answer text

    @property
    def pieces(self) -> tuple[str, ...]:
        return tuple(_PIECE.findall(self.text)) or (self.text,)


def scripted(
    tools: Sequence[tuple[str, Any]], choice: str | None, schema: Any, forced: str | None = None
) -> Scripted | None:
    """`tools`: (name, parameters schema) in request order; `choice`: none|auto|required|None."""
    if tools and choice != "none":
        name, params = next(((n, p) for n, p in tools if n == forced), tools[0])
        return Scripted(json.dumps(example(params if isinstance(params, Mapping) else {}), ensure_ascii=False), name)
    if isinstance(schema, Mapping):
        return Scripted(json.dumps(example(schema), ensure_ascii=False))
    if isinstance(schema, str):  # Bedrock sends the schema as a JSON string
        try:
            return Scripted(json.dumps(example(json.loads(schema)), ensure_ascii=False))
        except ValueError:
            return None
    return None


def example(schema: Any, depth: int = 0) -> Any:
    """A value that fits a (simple) JSON Schema: types, properties, enum, const, items, bounds."""
    if not isinstance(schema, Mapping) or depth > 6:
        return {}
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return example(schema[key][0], depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    if kind == "object":
        props = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else {}
        return {name: example(sub, depth + 1) for name, sub in props.items()}
    if kind == "array":
        count = max(1, int(schema.get("minItems") or 1))
        return [example(schema.get("items"), depth + 1) for _ in range(count)]
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        value = max(42, int(low) + 1 if "exclusiveMinimum" in schema else int(low))
        high = schema.get("maximum")
        return min(value, int(high)) if isinstance(high, int | float) else value
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    text = "Paris"
    if isinstance(schema.get("minLength"), int) and schema["minLength"] > len(text):
        text = text * (schema["minLength"] // len(text) + 1)
    return text


def openai_tools(tools: Any) -> list[tuple[str, Any]]:
    """(name, parameters) of OpenAI-style `tools` ({type: function, function: {...}})."""
    out = []
    for tool in tools if isinstance(tools, list) else ():
        fn = tool.get("function") if isinstance(tool, Mapping) else None
        if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
            out.append((fn["name"], fn.get("parameters")))
    return out


def choice_of(value: Any) -> tuple[str | None, str | None]:
    """(mode, forced name) from a tool_choice in any of the wire shapes."""
    if isinstance(value, str):
        return value, None
    if isinstance(value, Mapping):
        name = value.get("name") or (value.get("function") or {}).get("name")
        kind = value.get("type")
        if name:
            return "required", str(name)
        return {"any": "required", "auto": "auto", "none": "none"}.get(str(kind)), None
    return None, None
