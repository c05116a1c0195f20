"""`prompts:`: what is sent (messages, a file, or a synthetic filler), how (reasoning, temperature,
tools, structured output), and what the answer must satisfy (`expect:`).

JSON Schemas are checked against Draft 2020-12 at load time, so a typo in a
schema is a config error rather than every probe failing later. Tools and
schemas are kept as read-only dicts: `json.dumps` and `jsonschema` take them as they are.
"""

from __future__ import annotations

import re
from dataclasses import field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, PlainValidator, WithJsonSchema
from pydantic.json_schema import SkipJsonSchema

from monitor.config.errors import did_you_mean, fail, kind, problem
from monitor.config.fields import Bool, LoadContext, NonEmpty, Texts, number, spec, text
from monitor.protocols.base import Message

MAX_PROMPT_CHARS = 2_000_000  # ~500k tokens: beyond any context window
DEFAULT_MAX_TOKENS = 64
DEFAULT_SYNTHETIC_QUESTION = "In one sentence, what is the text above about?"
TOOL_CHOICES = ("auto", "none", "required")
# OpenAI's rule for function and response-format names; the strictest of the providers.
_FUNCTION_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


class JsonObject(dict):
    """A read-only JSON object (still a dict, for `json.dumps` and `jsonschema`)."""

    __slots__ = ()

    def _refuse(self, *_a: Any, **_k: Any) -> None:
        raise TypeError("config values are read-only")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _refuse  # type: ignore[assignment]
    __hash__ = None  # type: ignore[assignment]


class JsonArray(list):
    """A read-only JSON array (a list, for the same reason)."""

    __slots__ = ()
    __setitem__ = __delitem__ = append = extend = insert = pop = remove = clear = sort = reverse = JsonObject._refuse  # type: ignore[assignment]
    __iadd__ = __imul__ = JsonObject._refuse  # type: ignore[assignment]


def freeze_json(value: Any) -> Any:
    if isinstance(value, dict):
        return JsonObject({k: freeze_json(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return JsonArray(freeze_json(v) for v in value)
    return value


def _schema(value: Any) -> Any:
    import jsonschema  # only configs with schemas pay for the import

    if not isinstance(value, dict | bool):
        fail(f"expected a JSON Schema (a mapping), got {kind(value)}")
    try:
        jsonschema.Draft202012Validator.check_schema(value)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        fail(f"not a valid JSON Schema{f' at {where}' if where else ''}: {exc.message}"[:300])
    return freeze_json(value)


JsonSchema = Annotated[Any, PlainValidator(_schema), WithJsonSchema({"type": ["object", "boolean"]})]


def _function_name(value: Any) -> str:
    if not isinstance(value, str):
        fail(f"expected a string, got {kind(value)}")
    if not _FUNCTION_NAME.fullmatch(value):
        fail("invalid name {got}: letters, digits, '_' or '-', at most 64")
    return value


FunctionName = Annotated[
    str, BeforeValidator(_function_name), WithJsonSchema({"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"})
]
LongText = text(MAX_PROMPT_CHARS)


@spec
class Reasoning:
    """How hard a reasoning model thinks: an effort level or a token budget (exactly one is set)."""

    effort: Literal["low", "medium", "high"] | None = None
    budget_tokens: number(1, 1_000_000, integer=True) | None = None

    def _finish(self, ctx: LoadContext | None) -> list[dict]:
        if (self.effort is None) == (self.budget_tokens is None):
            return [problem((), "give exactly one of effort or budget_tokens")]
        return []


@spec
class MessageSpec:
    role: Literal["system", "user", "assistant"]
    content: LongText


@spec
class Function:
    name: FunctionName
    description: text(10_000) | None = None
    parameters: JsonSchema | None = None


@spec
class Tool:
    type: Literal["function"]
    function: Function


def _tool_json(tools: tuple[Tool, ...]) -> tuple[Any, ...]:
    """OpenAI's tool objects, ready for a request body."""
    out = []
    for tool in tools:
        fn = {k: getattr(tool.function, k) for k in ("name", "description", "parameters")}
        out.append(freeze_json({"type": "function", "function": {k: v for k, v in fn.items() if v is not None}}))
    return tuple(out)


def _tool_choice(value: Any) -> Any:
    """auto | none | required, or `{name: <tool>}` (normalised to a read-only {"name": ...})."""
    if isinstance(value, str):
        if value not in TOOL_CHOICES:
            fail(f"expected one of {', '.join(TOOL_CHOICES)} or {{name: <tool>}}, got {{got}}")
        return value
    if not isinstance(value, dict):
        fail(f"expected one of {', '.join(TOOL_CHOICES)} or {{name: <tool>}}, got {kind(value)}")
    for key in value:
        if key != "name":
            fail("unknown key", at=(key,))
    if "name" not in value:
        fail("required", at=("name",))
    return freeze_json({"name": _function_name(value["name"])})


ToolChoice = Annotated[
    Any,
    PlainValidator(_tool_choice),
    WithJsonSchema(
        {"anyOf": [{"enum": list(TOOL_CHOICES)}, {"type": "object", "properties": {"name": {"type": "string"}}}]}
    ),
]


@spec
class ResponseFormat:
    """Structured output: the answer must match `json_schema` (OpenAI `response_format`)."""

    json_schema: JsonSchema = field(hash=False)
    name: FunctionName = "answer"
    strict: Bool = True


@spec
class Synthetic:
    """A generated filler of `tokens` tokens before the question (long-context probes, no file to ship)."""

    tokens: number(1, 200_000, integer=True)
    seed: number(-(2**63), 2**63 - 1, integer=True) = 0


@spec
class ToolExpect:
    name: FunctionName  # the function the answer must call
    arguments: JsonSchema | None = field(default=None, hash=False)  # JSON Schema its arguments must match


def _regex(value: Any) -> Any:
    try:
        re.compile(value)
    except re.error as exc:
        fail(f"not a valid regular expression: {exc}")
    return value


def _one_or_many(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


def _name_or_spec(value: Any) -> Any:
    return {"name": value} if isinstance(value, str) else value


@spec
class Expect:
    """Checks on the answer; a failed one makes the sample an `assertion` error."""

    contains: Annotated[Texts, BeforeValidator(_one_or_many, json_schema_input_type=str | list[str])] = ()
    not_contains: Annotated[Texts, BeforeValidator(_one_or_many, json_schema_input_type=str | list[str])] = ()
    regex: Annotated[text(10_000), AfterValidator(_regex)] | None = None
    json_schema: JsonSchema | None = field(default=None, hash=False)
    tool: Annotated[ToolExpect, BeforeValidator(_name_or_spec, json_schema_input_type=str | ToolExpect)] | None = None
    max_chars: number(0, 10_000_000, integer=True) | None = None  # 0: no answer text at all (a tool-only probe)
    min_tokens: number(1, 1_000_000, integer=True) | None = None

    def _finish(self, ctx: LoadContext | None) -> list[dict]:
        if all(getattr(self, k) in (None, ()) for k in self.__pydantic_fields__):
            return [problem((), f"name at least one check: {', '.join(self.__pydantic_fields__)}")]
        return []


def _file_name(value: Any) -> Any:
    if not isinstance(value, str) or not value.strip():
        fail(f"expected a file name, got {kind(value) if not isinstance(value, str) else 'an empty string'}")
    return value


def _to_messages(specs: tuple[MessageSpec, ...]) -> tuple[Message, ...]:
    return tuple(Message(m.role, m.content) for m in specs)


@spec
class Prompt:
    name: SkipJsonSchema[str] = field(default="", init=False)  # its key under prompts:
    # The turns sent, the system message and the file's text included once loaded.
    messages: Annotated[tuple[MessageSpec, ...], NonEmpty, AfterValidator(_to_messages)] | None = None
    max_tokens: number(1, 1_000_000, integer=True) = DEFAULT_MAX_TOKENS
    file: Annotated[str, BeforeValidator(_file_name)] | None = None  # as written in the config, for display
    system: LongText | None = None
    temperature: number(0, 2) | None = None
    tools: Annotated[tuple[Tool, ...], NonEmpty, AfterValidator(_tool_json)] = field(default=(), hash=False)
    tool_choice: ToolChoice | None = field(default=None, hash=False)  # auto|none|required|{"name": fn}
    response_format: ResponseFormat | None = None
    synthetic: Synthetic | None = None
    expect: Expect | None = None
    reasoning: Reasoning | None = None
    # A cache probe (DESIGN §13): the messages are a stable prefix, probed each round as a
    # cold/warm pair (monitor.probe.cache_pair); check-config warns when it is too short to cache.
    cache: Bool = False

    def _finish(self, ctx: LoadContext | None) -> list[dict]:
        """Compose the messages sent (system, then the turns, the file or the synthetic question)."""
        has_messages, has_file = self.messages is not None, self.file is not None
        if (has_messages and has_file) or not (has_messages or has_file or self.synthetic):
            return [problem((), "give exactly one of messages or file")]
        errors = self._tool_errors()
        messages = [Message("system", self.system)] if self.system else []
        for i, message in enumerate(self.messages or ()):
            if message.role == "system" and self.system:
                errors.append(problem(("messages", i, "role"), "a system message is also given by system:"))
        messages += self.messages or ()
        if has_file:
            got = read_prompt_file(self.file, ctx.base_dir if ctx and ctx.base_dir else Path.cwd())
            if isinstance(got, dict):
                return [*errors, got]
            messages.append(Message("user", got))
        elif not has_messages:
            messages.append(Message("user", DEFAULT_SYNTHETIC_QUESTION))
        if not errors and all(m.role == "system" for m in messages):
            errors.append(problem((), "needs a user message, not only a system one"))
        object.__setattr__(self, "messages", tuple(messages))
        return errors

    def _tool_errors(self) -> list[dict]:
        names = [t["function"]["name"] for t in self.tools]
        errors = [
            problem(("tools", i, "function", "name"), f"duplicate tool {name!r}")
            for i, name in enumerate(names)
            if name in names[:i]
        ]
        wanted = [(("tool_choice",), self.tool_choice), (("expect", "tool"), self.expect and self.expect.tool)]
        for loc, ref in wanted:
            name = ref.get("name") if isinstance(ref, dict) else getattr(ref, "name", None)
            if ref is not None and not names:
                errors.append(problem(loc, "the prompt has no tools"))
            elif name is not None and name not in names:
                errors.append(problem(loc, f"unknown tool {name!r}{did_you_mean(name, names)}"))
        return errors


def read_prompt_file(value: str, base_dir: Path) -> str | dict:
    """The file's text, or the problem with it; it must sit inside the config's directory."""

    def bad(message: str) -> dict:
        return problem(("file",), message, value)

    try:
        base = Path(base_dir).resolve()
        wanted = Path(value)
        full = (wanted if wanted.is_absolute() else base / wanted).resolve()
    except (OSError, ValueError, RuntimeError):
        return bad("invalid file name {got}")
    # Resolving first also follows symlinks: a link inside pointing outside is refused too.
    if not full.is_relative_to(base):
        return bad("path traversal: {got} is outside the config's directory")
    try:
        if not full.is_file():
            return bad("no such file {got} (relative to the config's directory)")
        if full.stat().st_size > MAX_PROMPT_CHARS * 4:
            return bad("file {got} is too large")
        text_ = full.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        return bad("file {got} is not UTF-8 text")
    except (OSError, ValueError) as exc:
        return bad(f"cannot read {{got}}: {getattr(exc, 'strerror', None) or type(exc).__name__}")
    if not text_.strip():
        return bad("file {got} is empty")
    return text_ if len(text_) <= MAX_PROMPT_CHARS else bad("file {got} is too large")
