"""Config problems as one `path.in.file: message` line each, pydantic's errors included.

Validators never format a value themselves: they write `{got}` where the value
belongs, and the lines are rendered once every secret in the file is known,
so a value that is, or contains, a secret shows as `'***'`.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, NoReturn

from pydantic import ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from monitor.errors import ConfigurationError
from monitor.redact import MIN_SECRET_LEN, redact

MAX_ERRORS = 200
_PLAIN_KEY = re.compile(r"[^\s.\[\]\"'\\]{1,80}")
_NOTHING = object()
# pydantic's own error types, in the project's words ({kind} names the kind of the input).
BUILTIN = {
    "missing": "required",
    "string_type": "expected a string, got {kind}",
    "int_type": "expected a whole number, got {kind}",
    "float_type": "expected a number, got {kind}",
    "bool_type": "expected true or false, got {kind}",
    "dict_type": "expected a mapping, got {kind}",
    "dataclass_type": "expected a mapping, got {kind}",
    "tuple_type": "expected a list, got {kind}",
    "list_type": "expected a list, got {kind}",
    "too_short": "must not be empty",
}


class ConfigError(ConfigurationError):
    """Every problem in a config, one `path.in.file: message` line each.

    A `monitor.errors.ConfigurationError`, so the CLI prints it (prefixed with
    the file name) and exits 2 without knowing about this module.
    """

    def __init__(self, errors: list[str], source: str | None = None) -> None:
        super().__init__(list(errors), source)

    def __str__(self) -> str:
        return "\n".join(self.errors)


def fail(message: str, *, at: tuple = (), value: Any = _NOTHING) -> NoReturn:
    """Reject a value from inside a validator; `at` points below it, `{got}` shows `value` (default: the input)."""
    ctx = {"message": message, "at": at} | ({} if value is _NOTHING else {"value": value})
    raise PydanticCustomError("config", "{message}", ctx)


def problem(loc: tuple, message: str, value: Any = None, category: str = "config") -> dict[str, Any]:
    """An error found outside pydantic (a reference, the matrix), in pydantic's error shape."""
    return {"type": category, "loc": tuple(loc), "msg": message, "input": value, "ctx": {"message": message}}


def raise_all(errors: list[dict[str, Any]]) -> NoReturn:
    """Raise several errors from one validator, so a model reports them together with its fields'."""
    details = [
        InitErrorDetails(type=PydanticCustomError(e["type"], e["msg"], e.get("ctx")), loc=e["loc"], input=e["input"])
        for e in errors
    ]
    raise ValidationError.from_exception_data("config", details)


# -------------------------------------------------------------------- words
def join(path: str, key: object) -> str:
    """`providers` + `openai` -> `providers.openai`; list indexes -> `[0]`; odd keys are quoted."""
    if isinstance(key, int) and not isinstance(key, bool):
        return f"{path}[{key}]"
    if isinstance(key, str) and _PLAIN_KEY.fullmatch(key) and key.isprintable():
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key if isinstance(key, str) else repr(key))[:80]}]"


def path_of(loc: Iterable[Any]) -> str:
    path = ""
    for part in loc:
        # pydantic's marker for "the key itself" follows the key, which the path already names;
        # first in the path it can only be a user's key that happens to be spelled "[key]".
        if part != "[key]" or not path:
            path = join(path, part)
    return path


def kind(value: object) -> str:
    """What a value is, in words, for `expected X, got Y` (never the value itself)."""
    if value is None:
        return "nothing"
    for types, word in ((bool, "a boolean"), (int | float, "a number"), (str, "a string"), (Mapping, "a mapping")):
        if isinstance(value, types):
            return word
    return "a list" if isinstance(value, list | tuple) else f"a {type(value).__name__}"


def did_you_mean(word: object, choices: Iterable[str]) -> str:
    if not isinstance(word, str) or len(word) > 100:
        return ""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def is_secret(text: str, secrets: Iterable[str]) -> bool:
    return any(text == s or (len(s) >= MIN_SECRET_LEN and s in text) for s in secrets)


def show(value: object, secrets: Iterable[str] = ()) -> str:
    """A short, one-line, secret-free rendering of a value: strings and numbers as themselves, else the kind."""
    if isinstance(value, str) and is_secret(value, secrets):
        return "'***'"  # before truncating: a cut secret would no longer be recognised
    if not isinstance(value, str | int | float):
        return kind(value)
    text = repr(str(value) if isinstance(value, str) else value)
    return redact(text[:77] + "..." if len(text) > 80 else text)


# --------------------------------------------------------------- rendering
def render(error: Mapping[str, Any], secrets: Iterable[str]) -> tuple[str, str]:
    """(path, message) for one error in pydantic's shape."""
    ctx = error.get("ctx") or {}
    loc = (*error["loc"], *ctx.get("at", ()))
    value = error.get("input")
    if error["type"] in ("config", "interpolation"):
        message = ctx["message"]
    elif error["type"] == "literal_error":
        choices = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        field = next((p for p in reversed(loc) if isinstance(p, str)), "value")
        message = f"unknown {field} {{got}}{did_you_mean(value, choices)}; expected one of {', '.join(choices)}"
    else:
        message = BUILTIN.get(error["type"], error.get("msg", "invalid"))
    message = message.replace("{kind}", kind(value)).replace("{got}", show(ctx.get("value", value), secrets))
    return path_of(loc), message


def final_lines(errors: Iterable[Mapping[str, Any]], secrets: Iterable[str], broken: set[tuple]) -> list[str]:
    """Every message once, one line each, secrets masked; none about a value whose `${VAR}` failed
    (its first error is the useful one), at most MAX_ERRORS (a generated file: the first tell the story)."""
    secrets = tuple(secrets)
    seen: set[str] = set()
    out: list[str] = []
    for error in errors:
        if tuple(error["loc"]) in broken and error["type"] != "interpolation":
            continue
        path, message = render(error, secrets)
        line = redact(" ".join((f"{path}: {message}" if path else message).split()), secrets)
        if line not in seen:
            seen.add(line)
            out.append(line)
    if len(out) > MAX_ERRORS:
        return [*out[:MAX_ERRORS], f"(and more): {len(out) - MAX_ERRORS} more errors not shown"]
    return out
