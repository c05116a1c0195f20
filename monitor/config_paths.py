"""Paths into the config file and small words for messages about them.

An error line is `path.in.file: message`; these helpers build the path and
describe a value by its kind, never by its content (the content may be a
secret taken from the environment).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
NAME_HINT = "letters, digits, '.', '_' or '-', at most 64, starting with a letter or digit"
_PLAIN_KEY = re.compile(r"[^\s.\[\]\"'\\]{1,80}")


class EnvText(str):
    """A string that `${VAR}` interpolation produced (so a number may arrive as text)."""

    __slots__ = ()


def join(path: str, key: object) -> str:
    """`providers` + `openai` -> `providers.openai`; odd keys are quoted."""
    if isinstance(key, str) and _PLAIN_KEY.fullmatch(key) and key.isprintable():
        part = key
    else:
        part = json.dumps(key if isinstance(key, str) else repr(key))[:80]
        return f"{path}[{part}]"
    return f"{path}.{part}" if path else part


def index(path: str, i: int) -> str:
    return f"{path}[{i}]"


def kind(value: object) -> str:
    """What a value is, in words, for `expected X, got Y` (never the value itself)."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a {type(value).__name__}"


def did_you_mean(word: object, choices: Iterable[str]) -> str:
    if not isinstance(word, str) or len(word) > 100:
        return ""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def is_http_url(value: str) -> bool:
    text = value.strip()
    if not text or any(c.isspace() or not c.isprintable() for c in text):
        return False
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018  (raises ValueError on a bad port)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)
