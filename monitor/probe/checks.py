"""Checks on the answer a probe received (`expect:` in a prompt). Pure.

A stream that finished cleanly can still be wrong: a swapped model, a refusal,
broken JSON, a tool never called. `evaluate` runs the prompt's checks in a
fixed order (CHECK_ORDER) and returns the first that failed, with a short
reason that never quotes the answer (only the config's own values, cut short),
so nothing the model echoed reaches the database; the runner still redacts it.

What each check sees (docs/probe-kinds.md, "Answer checks"):
- text checks (contains, not_contains, regex, json_schema) read the visible
  answer text, reasoning excluded, as streamed; a longer answer than
  measure.MAX_ANSWER_CHARS is checked on that prefix;
- `tool` reads the assembled tool calls; `max_chars` counts every answer
  character; `min_tokens` counts output tokens minus reasoning tokens.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from monitor.probe.measure import Answer

CHECK_ORDER = ("contains", "not_contains", "regex", "json_schema", "tool", "max_chars", "min_tokens")
MAX_REASON_CHARS = 200
_SHOW_CHARS = 40
_FENCE = re.compile(r"\A\s*```[A-Za-z0-9_-]*\s*\n(.*?)\n?\s*```\s*\Z", re.DOTALL)


@dataclass(frozen=True, slots=True)
class CheckFailure:
    check: str  # one of CHECK_ORDER
    reason: str


def evaluate(
    expect: Any, answer: Answer, output_tokens: int | None, reasoning_tokens: int | None = None
) -> CheckFailure | None:
    """The first failed check of `expect` (a config Expect), or None when all pass."""
    if expect is None:
        return None
    for check in CHECK_ORDER:
        value = getattr(expect, check, None)
        if value is None or value == ():
            continue
        reason = _CHECKS[check](value, answer, output_tokens, reasoning_tokens)
        if reason is not None:
            if not answer.complete and check in ("contains", "not_contains", "regex", "json_schema"):
                reason += f" (checked the first {len(answer.text)} of {answer.chars} chars)"
            return CheckFailure(check, reason[:MAX_REASON_CHARS])
    return None


def _contains(needles: tuple[str, ...], answer: Answer, *_: Any) -> str | None:
    for needle in needles:
        if needle not in answer.text:
            return f"answer does not contain {_show(needle)}"
    return None


def _not_contains(needles: tuple[str, ...], answer: Answer, *_: Any) -> str | None:
    for needle in needles:
        if needle in answer.text:
            return f"answer contains {_show(needle)}"
    return None


def _regex(pattern: str, answer: Answer, *_: Any) -> str | None:
    return None if _compiled(pattern).search(answer.text) else f"answer does not match {_show(pattern)}"


def _json_schema(schema: Mapping[str, Any], answer: Answer, *_: Any) -> str | None:
    value, error = parse_json(answer.text)
    if error is not None:
        return f"answer is not JSON: {error}"
    return _schema_error(schema, value, "answer")


def _tool(expected: Any, answer: Answer, *_: Any) -> str | None:
    if not answer.tool_calls:
        return f"no tool call (expected {_show(expected.name)})"
    calls = [c for c in answer.tool_calls if c.name == expected.name]
    if not calls:
        names = ", ".join(_show(c.name) for c in answer.tool_calls[:3])
        return f"called {names}, expected {_show(expected.name)}"
    reason = None
    for call in calls:  # any matching call that validates passes
        args, error = parse_json(call.arguments or "{}", fences=False)
        if error is not None:
            reason = f"{expected.name} arguments are not JSON: {error}"
        elif not isinstance(args, dict):
            reason = f"{expected.name} arguments are not a JSON object"
        elif expected.arguments is not None:
            reason = _schema_error(expected.arguments, args, f"{expected.name} arguments")
        else:
            reason = None
        if reason is None:
            return None
    return reason


def _max_chars(limit: int, answer: Answer, *_: Any) -> str | None:
    return f"answer has {answer.chars} chars, over max_chars {limit}" if answer.chars > limit else None


def _min_tokens(limit: int, answer: Answer, output_tokens: int | None, reasoning_tokens: int | None) -> str | None:
    tokens = max(0, (output_tokens or 0) - (reasoning_tokens or 0))
    return f"answer has {tokens} tokens, under min_tokens {limit}" if tokens < limit else None


_CHECKS = {
    "contains": _contains,
    "not_contains": _not_contains,
    "regex": _regex,
    "json_schema": _json_schema,
    "tool": _tool,
    "max_chars": _max_chars,
    "min_tokens": _min_tokens,
}


def parse_json(text: str, fences: bool = True) -> tuple[Any, str | None]:
    """JSON from an answer. One surrounding Markdown code fence is taken off first: models
    that were asked for JSON without structured output wrap it so, and it is still JSON."""
    if fences and (match := _FENCE.match(text)):
        text = match.group(1)
    try:
        return json.loads(text), None
    except ValueError as exc:
        message = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        where = f" at char {exc.pos}" if isinstance(exc, json.JSONDecodeError) else ""
        return None, f"{message}{where}"


def _schema_error(schema: Mapping[str, Any], value: Any, what: str) -> str | None:
    error = _validator(schema).best_match_error(value)
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "top level"
    # The validator's message quotes the offending value (the model's words): name the rule instead.
    return f"{what}: json_schema mismatch at {where} (rule {error.validator!r})"


class _Validator:
    def __init__(self, schema: Mapping[str, Any]) -> None:
        import jsonschema  # only prompts with schemas pay for the import

        self._schema = schema  # held, so the id() key of the cache stays this schema's
        self._validator = jsonschema.Draft202012Validator(_plain(schema))

    def best_match_error(self, value: Any):
        import jsonschema

        return jsonschema.exceptions.best_match(self._validator.iter_errors(value))


_VALIDATORS: dict[int, _Validator] = {}
_PATTERNS: dict[str, re.Pattern[str]] = {}


def _validator(schema: Mapping[str, Any]) -> _Validator:
    # Config schemas live as long as the config: compile each once (they are unhashable dicts).
    found = _VALIDATORS.get(id(schema))
    if found is None or found._schema is not schema:
        found = _VALIDATORS[id(schema)] = _Validator(schema)
    return found


def _compiled(pattern: str) -> re.Pattern[str]:
    found = _PATTERNS.get(pattern)
    if found is None:
        found = _PATTERNS[pattern] = re.compile(pattern)
    return found


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _show(value: str) -> str:
    text = value if len(value) <= _SHOW_CHARS else value[: _SHOW_CHARS - 1] + "…"
    return json.dumps(text, ensure_ascii=False)
