"""Typed, error-collecting reads of the parsed YAML tree.

Every getter records a `path: message` line and returns a fallback instead
of raising, so one pass reports every problem in the file at once. Messages
show a value only through `Reader.show`, which masks anything that is, or
contains, a known secret.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from monitor.config_paths import NAME_HINT, NAME_RE, EnvText, did_you_mean, index, is_http_url, join, kind
from monitor.redact import MIN_SECRET_LEN, Secret, redact
from monitor.units import format_duration, parse_duration, parse_percent

__all__ = ["NAME_HINT", "NAME_RE", "EnvText", "Reader", "did_you_mean", "index", "is_http_url", "join", "kind"]
_NUMERIC = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
MAX_ERRORS = 200
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


class Reader:
    def __init__(self, secrets: set[str] | None = None) -> None:
        self.errors: list[str] = []
        self.secrets: set[str] = secrets if secrets is not None else set()
        self.failed: set[str] = set()  # paths whose interpolation failed, collected during the walk
        self.broken: set[str] = set()  # ... and, once the walk is over, silenced

    # ----------------------------------------------------------- reporting
    def error(self, path: str, message: str) -> None:
        if path in self.broken:  # a value that failed interpolation: its first error is the useful one
            return
        self.errors.append(f"{path}: {message}" if path else message)

    def interpolation_failed(self, path: str, message: str) -> None:
        """Report a `${VAR}` problem and silence later complaints about the value it left behind."""
        self.error(path, message)
        self.failed.add(path)

    def is_secret(self, text: str) -> bool:
        return text in self.secrets or any(s in text for s in self.secrets if len(s) >= MIN_SECRET_LEN)

    def show(self, value: object) -> str:
        """A short, one-line, secret-free rendering of a value for a message."""
        if isinstance(value, str) and self.is_secret(value):
            return "'***'"
        text = repr(str(value) if isinstance(value, str) else value)
        return redact(text[:77] + "..." if len(text) > 80 else text)

    def final_errors(self) -> list[str]:
        """Every message, one line each, with every secret masked (belt and braces)."""
        seen, out = set(), []
        for line in self.errors:
            clean = redact(" ".join(line.split()), self.secrets)
            if clean not in seen:
                seen.add(clean)
                out.append(clean)
            if len(out) > MAX_ERRORS:  # a generated or pasted-wrong file: the first ones tell the story
                return [*out[:MAX_ERRORS], f"(and more): {len(self.errors) - MAX_ERRORS} more errors not shown"]
        return out

    def keep(self, text: str) -> str:
        """The string to store: a `Secret` if it holds one (so its repr is masked)."""
        return Secret(text) if self.is_secret(text) else str(text)

    # ------------------------------------------------------------- structure
    def mapping(
        self, value: Any, path: str, allowed: Iterable[str] | None = None, required: Iterable[str] = ()
    ) -> dict[str, Any] | None:
        """A dict with string keys; unknown and missing keys reported. None if not a mapping."""
        if not isinstance(value, Mapping):
            self.error(path, f"expected a mapping, got {kind(value)}")
            return None
        allowed_set = None if allowed is None else tuple(allowed)
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str) or not key:
                self.error(join(path, key), "keys must be non-empty strings")
            elif allowed_set is not None and key not in allowed_set:
                self.error(join(path, key), f"unknown key{did_you_mean(key, allowed_set)}")
            else:
                out[key] = item
        for key in required:
            if out.get(key) is None:
                self.error(join(path, key), "required")
        return out

    def items(self, m: Mapping[str, Any], key: str, path: str) -> list[tuple[str, Any]]:
        """(path, element) for each element of the list at `key`; [] if absent."""
        value = m.get(key)
        sub = join(path, key)
        if value is None:
            return []
        if not isinstance(value, list):
            self.error(sub, f"expected a list, got {kind(value)}")
            return []
        return [(index(sub, i), item) for i, item in enumerate(value)]

    # ---------------------------------------------------------------- scalars
    def text(
        self,
        m: Mapping[str, Any],
        key: str,
        path: str,
        default: Any = None,
        *,
        required: bool = False,
        name: bool = False,
        max_len: int = 4096,
    ) -> Any:
        value, sub = m.get(key), join(path, key)
        if value is None:
            if required:
                self.error(sub, "required")
            return default
        return self.check_text(value, sub, default, name=name, max_len=max_len)

    def check_text(self, value: Any, path: str, default: Any = None, *, name: bool = False, max_len: int = 4096) -> Any:
        if not isinstance(value, str):
            self.error(path, f"expected a string, got {kind(value)}")
            return default
        if name and not NAME_RE.fullmatch(value):
            self.error(path, f"invalid name {self.show(value)}: {NAME_HINT}")
            return default
        if not value.strip():
            self.error(path, "must not be empty")
            return default
        if len(value) > max_len:
            self.error(path, f"too long (over {max_len} characters)")
            return default
        return self.keep(value)

    def boolean(self, m: Mapping[str, Any], key: str, path: str, default: Any) -> Any:
        value, sub = m.get(key), join(path, key)
        if value is None:
            return default
        if isinstance(value, EnvText) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        if not isinstance(value, bool):
            self.error(sub, f"expected true or false, got {kind(value)}")
            return default
        return value

    def number(
        self,
        m: Mapping[str, Any],
        key: str,
        path: str,
        default: Any,
        *,
        lo: float,
        hi: float,
        integer: bool = False,
        lo_open: bool = False,
    ) -> Any:
        value, sub = m.get(key), join(path, key)
        if value is None:
            return default
        return self.check_number(value, sub, default, lo=lo, hi=hi, integer=integer, lo_open=lo_open)

    def check_number(
        self, value: Any, path: str, default: Any, *, lo: float, hi: float, integer: bool = False, lo_open: bool = False
    ) -> Any:
        if isinstance(value, EnvText) and _NUMERIC.fullmatch(value.strip()):
            value = float(value) if not integer or not value.strip().lstrip("+-").isdigit() else int(value)
        wanted = "a whole number" if integer else "a number"
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.error(path, f"expected {wanted}, got {kind(value)}")
            return default
        if integer and isinstance(value, float):
            if not value.is_integer():
                self.error(path, f"expected {wanted}")
                return default
            value = int(value)
        if isinstance(value, float) and not math.isfinite(value):
            self.error(path, "must be a finite number")
            return default
        if value < lo or (lo_open and value == lo) or value > hi:
            low = f"greater than {_num(lo)}" if lo_open else f"at least {_num(lo)}"
            self.error(path, f"must be {low} and at most {_num(hi)}")
            return default
        return value

    def duration(
        self, m: Mapping[str, Any], key: str, path: str, default: Any, *, max_s: float, min_s: float = 0.0
    ) -> Any:
        """Seconds; must be > min_s (zero and negative durations are errors) and <= max_s."""
        value, sub = m.get(key), join(path, key)
        if value is None:
            return default
        try:
            seconds = parse_duration(value)
        except ValueError as exc:
            self.error(sub, f"{exc}, got {self.show(value) if isinstance(value, str | int | float) else kind(value)}")
            return default
        if seconds <= min_s:
            self.error(
                sub, "must be longer than zero" if min_s == 0 else f"must be longer than {format_duration(min_s)}"
            )
            return default
        if seconds > max_s:
            self.error(sub, f"too long: at most {format_duration(max_s)}")
            return default
        return seconds

    def percent(self, value: Any, path: str, default: Any, *, max_fraction: float = 1.0, positive: bool = False) -> Any:
        try:
            fraction = parse_percent(value, max_fraction)
        except ValueError as exc:
            shown = self.show(value) if isinstance(value, str | int | float) else kind(value)
            self.error(path, f"{exc}, got {shown}")
            return default
        if positive and fraction == 0:
            self.error(path, "must be more than 0%")
            return default
        return fraction

    def url(self, value: Any, path: str, default: Any = None) -> Any:
        """An http(s) URL with a host (secret-safe: a bad URL from a secret is shown masked)."""
        if not isinstance(value, str):
            self.error(path, f"expected a URL, got {kind(value)}")
            return default
        if not is_http_url(value):
            self.error(path, f"not a URL (expected http://host/... or https://host/...), got {self.show(value)}")
            return default
        return self.keep(value.strip())

    def secret(self, m: Mapping[str, Any], key: str, path: str, *, required: bool = False) -> str | None:
        """A credential: a string (never echoed), remembered as a secret; empty = absent."""
        value, sub = m.get(key), join(path, key)
        if isinstance(value, str) and value:
            self.secrets.add(value)
            if "\n" in value or "\r" in value:
                self.error(sub, "must be one line")
                return None
            return Secret(value)
        if value is not None and not isinstance(value, str):
            self.error(sub, f"expected a string, got {kind(value)}")
        elif required:
            self.error(sub, "required" if value is None else "must not be empty")
        return None

    def refs(
        self,
        m: Mapping[str, Any],
        key: str,
        path: str,
        known: Iterable[str],
        what: str,
        *,
        required: bool = False,
        where: str = "",
    ) -> tuple[str, ...]:
        """A list of names that must each be one of `known` (errors point at the element)."""
        names = self.str_list(m, key, path, required=required)
        known_list = list(known)
        raw = m.get(key) if isinstance(m.get(key), list) else []
        for i, item in enumerate(raw):
            if isinstance(item, str) and item in names and item not in known_list:
                self.error(
                    index(join(path, key), i),
                    f"unknown {what} {self.show(item)}{where}{did_you_mean(item, known_list)}",
                )
        return tuple(n for n in names if n in known_list)

    # ------------------------------------------------------------ collections
    def str_list(
        self,
        m: Mapping[str, Any],
        key: str,
        path: str,
        *,
        required: bool = False,
        name: bool = False,
        max_len: int = 4096,
    ) -> tuple[str, ...]:
        """A list of distinct non-empty strings; () if absent."""
        value, sub = m.get(key), join(path, key)
        if value is None:
            if required:
                self.error(sub, "required")
            return ()
        if not isinstance(value, list):
            self.error(sub, f"expected a list, got {kind(value)}")
            return ()
        if required and not value:
            self.error(sub, "must not be empty")
        out: list[str] = []
        for i, item in enumerate(value):
            got = self.check_text(item, index(sub, i), name=name, max_len=max_len)
            if got is None:
                continue
            if got in out:
                self.error(index(sub, i), f"duplicate {self.show(got)}")
            else:
                out.append(got)
        return tuple(out)

    def str_map(
        self, m: Mapping[str, Any], key: str, path: str, *, secret: bool = False, keys: Iterable[str] | None = None
    ) -> dict[str, str]:
        """A mapping of string -> one-line string. With `secret`, every value becomes a secret."""
        value, sub = m.get(key), join(path, key)
        if value is None:
            return {}
        got = self.mapping(value, sub, allowed=keys)
        if got is None:
            return {}
        out: dict[str, str] = {}
        for k, v in got.items():
            if isinstance(v, bool) or not isinstance(v, str | int | float):
                self.error(join(sub, k), f"expected a string, got {kind(v)}")
                continue
            text = str(v)
            if "\n" in text or "\r" in text:
                self.error(join(sub, k), "must be one line")
                continue
            if secret and text:
                self.secrets.add(text)
            out[k] = self.keep(text)
        return out

    def header_map(self, m: Mapping[str, Any], key: str, path: str) -> dict[str, str]:
        """HTTP headers: valid names; values are secrets (they often carry auth)."""
        headers = self.str_map(m, key, path, secret=True)
        for name in list(headers):
            if not _HEADER_NAME.fullmatch(name):
                self.error(join(join(path, key), name), "not a valid HTTP header name")
                del headers[name]
        return headers


def _num(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"
