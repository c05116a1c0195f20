"""What a prompt asks beyond its messages: reasoning, sampling, tools, structured output,
a synthetic filler, and the checks on the answer (`expect:`).

JSON Schemas are checked against Draft 2020-12 here, at load time, so a typo
in a schema is a config error rather than every probe failing later.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from monitor.config_reader import Reader, did_you_mean, join, kind
from monitor.config_schema import Expect, Reasoning, ResponseFormat, Synthetic, ToolExpect

EFFORTS = ("low", "medium", "high")
TOOL_CHOICES = ("auto", "none", "required")
MAX_SYNTHETIC_TOKENS = 200_000
MAX_BUDGET_TOKENS = 1_000_000
# OpenAI's rule for function and response-format names; the strictest of the providers.
_FUNCTION_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
FUNCTION_NAME_HINT = "letters, digits, '_' or '-', at most 64"
DEFAULT_SYNTHETIC_QUESTION = "In one sentence, what is the text above about?"


class JsonObject(dict):
    """A read-only JSON object: still a dict, so `json.dumps` and `jsonschema` take it as is."""

    __slots__ = ()

    def _refuse(self, *_a: Any, **_k: Any) -> None:
        raise TypeError("config values are read-only")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]
    __ior__ = _refuse  # type: ignore[assignment]

    def __hash__(self) -> int:  # type: ignore[override]
        raise TypeError("unhashable type: 'JsonObject'")


class JsonArray(list):
    """A read-only JSON array (a list, for the same reason)."""

    __slots__ = ()

    def _refuse(self, *_a: Any, **_k: Any) -> None:
        raise TypeError("config values are read-only")

    __setitem__ = __delitem__ = append = extend = insert = pop = remove = clear = sort = reverse = _refuse  # type: ignore[assignment]
    __iadd__ = __imul__ = _refuse  # type: ignore[assignment]


def freeze_json(value: Any) -> Any:
    if isinstance(value, Mapping):
        return JsonObject({str(k): freeze_json(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return JsonArray(freeze_json(v) for v in value)
    return value


def schema_errors(schema: Any) -> str | None:
    """Why `schema` is not a Draft 2020-12 JSON Schema, in one line; None if it is one."""
    import jsonschema  # only configs with schemas pay for the import

    if not isinstance(schema, Mapping | bool):
        return f"expected a JSON Schema (a mapping), got {kind(schema)}"
    try:
        jsonschema.Draft202012Validator.check_schema(_thaw(schema))
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        return f"not a valid JSON Schema{f' at {where}' if where else ''}: {exc.message}"[:300]
    return None


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_thaw(v) for v in value]
    return value


def json_schema(r: Reader, value: Any, path: str) -> Mapping[str, Any] | None:
    problem = schema_errors(value)
    if problem:
        r.error(path, problem)
        return None
    return freeze_json(value)


# ----------------------------------------------------------------- reasoning
def build_reasoning(r: Reader, s: Mapping[str, Any], path: str) -> Reasoning | None:
    if s.get("reasoning") is None:
        return None
    sub = join(path, "reasoning")
    m = r.mapping(s["reasoning"], sub, ("effort", "budget_tokens"))
    if m is None:
        return None
    if (m.get("effort") is None) == (m.get("budget_tokens") is None):
        r.error(sub, "give exactly one of effort or budget_tokens")
        return None
    effort = r.text(m, "effort", sub)
    if effort is not None and effort not in EFFORTS:
        r.error(join(sub, "effort"), f"expected one of {', '.join(EFFORTS)}, got {r.show(effort)}")
        return None
    budget = r.number(m, "budget_tokens", sub, None, lo=1, hi=MAX_BUDGET_TOKENS, integer=True)
    if effort is None and budget is None:
        return None
    return Reasoning(effort=effort, budget_tokens=budget)


# --------------------------------------------------------------- the prompt
def build_extras(r: Reader, s: Mapping[str, Any], path: str) -> dict[str, Any]:
    """The optional Prompt fields beyond messages and max_tokens."""
    temperature = r.number(s, "temperature", path, None, lo=0, hi=2)
    tools = _tools(r, s, path)
    names = [t["function"]["name"] for t in tools]
    return {
        "temperature": None if temperature is None else float(temperature),
        "tools": tools,
        "tool_choice": _tool_choice(r, s, path, names),
        "response_format": _response_format(r, s, path),
        "synthetic": build_synthetic(r, s, path),
        "expect": _expect(r, s, path, names),
        "reasoning": build_reasoning(r, s, path),
    }


def build_synthetic(r: Reader, s: Mapping[str, Any], path: str) -> Synthetic | None:
    if s.get("synthetic") is None:
        return None
    sub = join(path, "synthetic")
    m = r.mapping(s["synthetic"], sub, ("tokens", "seed"), required=("tokens",))
    if m is None:
        return None
    tokens = r.number(m, "tokens", sub, None, lo=1, hi=MAX_SYNTHETIC_TOKENS, integer=True)
    seed = r.number(m, "seed", sub, 0, lo=-(2**63), hi=2**63 - 1, integer=True)
    return None if tokens is None or seed is None else Synthetic(tokens=tokens, seed=seed)


def _function_name(r: Reader, value: Any, path: str) -> str | None:
    if not isinstance(value, str):
        r.error(path, "required" if value is None else f"expected a string, got {kind(value)}")
        return None
    if not _FUNCTION_NAME.fullmatch(value):
        r.error(path, f"invalid name {r.show(value)}: {FUNCTION_NAME_HINT}")
        return None
    return value


def _tools(r: Reader, s: Mapping[str, Any], path: str) -> tuple[Mapping[str, Any], ...]:
    out: list[Mapping[str, Any]] = []
    seen: set[str] = set()
    items = r.items(s, "tools", path)
    if not items and isinstance(s.get("tools"), list):
        r.error(join(path, "tools"), "must not be empty (leave it out for no tools)")
    for tpath, item in items:
        t = r.mapping(item, tpath, ("type", "function"), required=("type", "function"))
        if t is None:
            continue
        if t.get("type") is not None and t["type"] != "function":
            r.error(join(tpath, "type"), f"expected function, got {r.show(t['type'])}")
        fpath = join(tpath, "function")
        f = r.mapping(t["function"], fpath, ("name", "description", "parameters")) if "function" in t else None
        if f is None or t.get("type") != "function":
            continue
        name = _function_name(r, f.get("name"), join(fpath, "name"))
        description = r.text(f, "description", fpath, max_len=10_000)
        parameters = json_schema(r, f["parameters"], join(fpath, "parameters")) if "parameters" in f else None
        if name in seen:
            r.error(join(fpath, "name"), f"duplicate tool {name!r}")
        elif name is not None:
            seen.add(name)
            function: dict[str, Any] = {"name": name}
            if description is not None:
                function["description"] = description
            if parameters is not None:
                function["parameters"] = parameters
            out.append(freeze_json({"type": "function", "function": function}))
    return tuple(out)


def _tool_choice(r: Reader, s: Mapping[str, Any], path: str, tools: list[str]) -> str | Mapping[str, Any] | None:
    value, sub = s.get("tool_choice"), join(path, "tool_choice")
    if value is None:
        return None
    if not tools:
        r.error(sub, "the prompt has no tools")
        return None
    if isinstance(value, str):
        if value not in TOOL_CHOICES:
            r.error(sub, f"expected one of {', '.join(TOOL_CHOICES)} or {{name: <tool>}}, got {r.show(value)}")
            return None
        return value
    m = r.mapping(value, sub, ("name",), required=("name",))
    name = _tool_ref(r, m.get("name"), join(sub, "name"), tools) if m else None
    return None if name is None else freeze_json({"name": name})


def _tool_ref(r: Reader, value: Any, path: str, tools: list[str]) -> str | None:
    name = _function_name(r, value, path)
    if name is not None and name not in tools:
        r.error(path, f"unknown tool {name!r}{did_you_mean(name, tools)}")
        return None
    return name


def _response_format(r: Reader, s: Mapping[str, Any], path: str) -> ResponseFormat | None:
    if s.get("response_format") is None:
        return None
    sub = join(path, "response_format")
    m = r.mapping(s["response_format"], sub, ("json_schema", "name", "strict"), required=("json_schema",))
    if m is None or m.get("json_schema") is None:
        return None
    schema = json_schema(r, m["json_schema"], join(sub, "json_schema"))
    name = _function_name(r, m["name"], join(sub, "name")) if m.get("name") is not None else "answer"
    strict = r.boolean(m, "strict", sub, True)
    if schema is None or name is None:
        return None
    return ResponseFormat(json_schema=schema, name=name, strict=strict)


EXPECT_KEYS = ("contains", "not_contains", "regex", "json_schema", "tool", "max_chars", "min_tokens")


def _expect(r: Reader, s: Mapping[str, Any], path: str, tools: list[str]) -> Expect | None:
    if s.get("expect") is None:
        return None
    sub = join(path, "expect")
    m = r.mapping(s["expect"], sub, EXPECT_KEYS)
    if m is None:
        return None
    if not any(m.get(k) is not None for k in EXPECT_KEYS):
        if len(m) == len(s["expect"]):  # else an unknown key was reported: likely a typo of one
            r.error(sub, f"name at least one check: {', '.join(EXPECT_KEYS)}")
        return None
    regex = r.text(m, "regex", sub, max_len=10_000)
    if regex is not None:
        try:
            re.compile(regex)
        except re.error as exc:
            r.error(join(sub, "regex"), f"not a valid regular expression: {exc}")
            regex = None
    return Expect(
        contains=_texts(r, m, "contains", sub),
        not_contains=_texts(r, m, "not_contains", sub),
        regex=regex,
        json_schema=json_schema(r, m["json_schema"], join(sub, "json_schema")) if "json_schema" in m else None,
        tool=_tool_expect(r, m.get("tool"), join(sub, "tool"), tools),
        max_chars=r.number(m, "max_chars", sub, None, lo=1, hi=10_000_000, integer=True),
        min_tokens=r.number(m, "min_tokens", sub, None, lo=1, hi=1_000_000, integer=True),
    )


def _texts(r: Reader, m: Mapping[str, Any], key: str, path: str) -> tuple[str, ...]:
    """One string or a list of them."""
    if isinstance(m.get(key), str):
        got = r.check_text(m[key], join(path, key))
        return () if got is None else (got,)
    return r.str_list(m, key, path)


def _tool_expect(r: Reader, value: Any, path: str, tools: list[str]) -> ToolExpect | None:
    if value is None:
        return None
    if not tools:
        r.error(path, "the prompt has no tools")
        return None
    if isinstance(value, str):
        name = _tool_ref(r, value, path, tools)
        return None if name is None else ToolExpect(name=name)
    m = r.mapping(value, path, ("name", "arguments"), required=("name",))
    if m is None:
        return None
    name = _tool_ref(r, m.get("name"), join(path, "name"), tools) if m.get("name") is not None else None
    arguments = json_schema(r, m["arguments"], join(path, "arguments")) if "arguments" in m else None
    return None if name is None else ToolExpect(name=name, arguments=arguments)
