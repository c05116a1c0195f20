"""The building blocks of the schema: how a section is validated, and the field types it uses.

`@spec` makes a frozen pydantic dataclass that reports unknown keys (with a
suggestion) beside its fields' errors, and may check across its fields once
they are valid (`_prepare` before, `_finish` after). The field types accept
what people write (`5m`, `50%`, a number from `${VAR}`) and reject the rest
with the project's messages.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    AliasChoices,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationError,
    WithJsonSchema,
    WrapValidator,
    model_validator,
)
from pydantic.dataclasses import dataclass as pydantic_dataclass

from monitor.config.errors import did_you_mean, fail, is_secret, kind, problem, raise_all
from monitor.config.interpolation import EnvText, Unset
from monitor.redact import Secret
from monitor.units import format_duration, parse_duration, parse_percent

NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
NAME_HINT = "letters, digits, '.', '_' or '-', at most 64, starting with a letter or digit"
_NUMERIC = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
MAX_TEXT = 4096


@dataclass
class LoadContext:
    """What validators share during one load: the secrets seen so far, where prompt files are, and the
    errors of entries left out (a broken provider is reported and dropped; the others still load)."""

    secrets: set[str] = field(default_factory=set)
    base_dir: Path | None = None
    errors: list[dict[str, Any]] = field(default_factory=list)
    deferred: set[tuple] = field(default_factory=set)  # where a credential's `${VAR}` was left unresolved


def _ctx(info: Any) -> LoadContext | None:
    return info.context if isinstance(getattr(info, "context", None), LoadContext) else None


def learn(text: str, info: Any) -> None:
    if (ctx := _ctx(info)) is not None and text:
        ctx.secrets.add(text)


def keep(text: str, info: Any) -> str:
    """The string to store: a `Secret` if it holds one (so its repr is masked)."""
    ctx = _ctx(info)
    return Secret(text) if ctx is not None and is_secret(text, ctx.secrets) else text


# --------------------------------------------------------------- sections
def _closed(schema: dict[str, Any], cls: type) -> None:
    """JSON Schema: no keys beyond the known ones; a notifier config names its `type`."""
    schema["additionalProperties"] = False
    tag = cls.__dict__.get("type")
    if isinstance(tag, str) and tag:
        schema["properties"] = {"type": {"const": tag}, **schema.get("properties", {})}
        schema["required"] = ["type", *schema.get("required", [])]


MODEL_CONFIG = ConfigDict(validate_by_name=True, validate_by_alias=True, json_schema_extra=_closed)


def yaml_keys(cls: type) -> tuple[str, ...]:
    """The keys a section takes in the file: its fields' aliases, not the `_s` attribute names."""
    keys: list[str] = []
    for name, info in cls.__pydantic_fields__.items():
        if info.init is False:
            continue
        alias = info.validation_alias
        keys += alias.choices if isinstance(alias, AliasChoices) else [alias or name]
    return tuple(str(k) for k in keys)


def spec(cls: type | None = None, **options: Any) -> Any:
    """Decorate a class into a frozen, slotted pydantic dataclass that validates a mapping of the file."""

    def build(cls: type) -> type:
        built: list[type] = []  # slots=True makes a new class: the validator must see that one

        def validate(_: type, data: Any, handler: Callable[[Any], Any], info: Any) -> Any:
            if not isinstance(data, Mapping):  # a Python constructor call, or not a mapping at all
                return handler(data)
            final, errors, known = built[0], [], yaml_keys(built[0])
            clean = {}
            for key, value in data.items():
                if not isinstance(key, str) or not key:
                    errors.append(problem((key,), "keys must be non-empty strings"))
                elif key not in known:
                    errors.append(problem((key,), f"unknown key{did_you_mean(key, known)}"))
                else:
                    clean[key] = value
            if hasattr(final, "_prepare"):
                clean, found = final._prepare(clean)
                errors += found
            try:
                value = handler(clean)
            except ValidationError as exc:
                raise_all([*errors, *exc.errors()])
            if not errors and hasattr(value, "_finish"):
                errors += value._finish(_ctx(info))
            if errors:
                raise_all(errors)
            return value

        cls._validate_section = model_validator(mode="wrap")(classmethod(validate))  # type: ignore[attr-defined]
        built.append(pydantic_dataclass(frozen=True, slots=True, config=MODEL_CONFIG, **options)(cls))
        return built[0]

    return build(cls) if cls is not None else build


def entries(*, keyed: bool = False, named: bool = False) -> WrapValidator:
    """A top-level section of entries (a list, or a mapping when `keyed`), each validated alone: a broken
    one is reported and left out (a list keeps None in its place, so indexes still match the file);
    `named` entries get their key as `name`."""

    def validate(value: Any, handler: Callable[[Any], Any], info: Any) -> Any:
        ctx, section = _ctx(info), info.field_name
        if ctx is None or not isinstance(value, Mapping if keyed else list):
            return handler(value)  # the section's own type error
        is_list = not keyed
        good: dict[Any, Any] = {}
        for key, item in enumerate(value) if is_list else value.items():
            try:
                got = handler([item])[0] if is_list else handler({key: item})[key]
            except ValidationError as exc:
                for e in exc.errors():
                    loc = (key, *e["loc"][1:]) if is_list else e["loc"]
                    ctx.errors.append({**e, "loc": (section, *loc)})
                got = None
            if got is not None and named:
                object.__setattr__(got, "name", key)  # a frozen value: its name is its key in the file
            good[key] = got
        return tuple(good.values()) if is_list else MappingProxyType({k: v for k, v in good.items() if v is not None})

    return WrapValidator(validate)


# ------------------------------------------------------------ field types
# In the JSON Schema, a number or a boolean may also be written `${VAR}`.
ENV_REF = {"type": "string", "pattern": r"\$\{"}


def _schema(**json: Any) -> WithJsonSchema:
    return WithJsonSchema(json)


def text(max_len: int = MAX_TEXT, *, name: bool = False) -> Any:
    def check(value: Any) -> str:
        if not isinstance(value, str):
            fail(f"expected a string, got {kind(value)}")
        if name and not NAME_RE.fullmatch(value):
            fail(f"invalid name {{got}}: {NAME_HINT}")
        if not value.strip():
            fail("must not be empty")
        if len(value) > max_len:
            fail(f"too long (over {max_len} characters)")
        return value

    pattern = {"pattern": f"^{NAME_RE.pattern}$"} if name else {"minLength": 1, "maxLength": max_len}
    return Annotated[str, BeforeValidator(check), AfterValidator(keep), _schema(type="string", **pattern)]


def _key(value: Any) -> str:
    if not isinstance(value, str) or not NAME_RE.fullmatch(value):
        fail("invalid name: " + NAME_HINT if isinstance(value, str) else "keys must be non-empty strings")
    return value


Text = text()
Name = text(name=True)
Key = Annotated[str, BeforeValidator(_key), _schema(type="string", pattern=f"^{NAME_RE.pattern}$")]


def number(lo: float, hi: float, *, integer: bool = False, lo_open: bool = False) -> Any:
    wanted = "a whole number" if integer else "a number"

    def check(value: Any) -> Any:
        if isinstance(value, EnvText) and _NUMERIC.fullmatch(value.strip()):  # `${N}` arrives as text
            value = int(value) if integer and value.strip().lstrip("+-").isdigit() else float(value)
        if isinstance(value, bool) or not isinstance(value, int | float):
            fail(f"expected {wanted}, got {kind(value)}")
        if integer and isinstance(value, float):
            if not value.is_integer():
                fail(f"expected {wanted}")
            value = int(value)
        if isinstance(value, float) and not math.isfinite(value):
            fail("must be a finite number")
        if value < lo or (lo_open and value == lo) or value > hi:
            fail(f"must be {'greater than' if lo_open else 'at least'} {_num(lo)} and at most {_num(hi)}")
        return value

    bounds = {"exclusiveMinimum" if lo_open else "minimum": lo, "maximum": hi}
    json = {"type": "integer" if integer else "number", **bounds}
    return Annotated[int if integer else float, BeforeValidator(check), _schema(anyOf=[json, ENV_REF])]


def _num(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def _bool(value: Any) -> bool:
    if isinstance(value, EnvText) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if not isinstance(value, bool):
        fail(f"expected true or false, got {kind(value)}")
    return value


Bool = Annotated[bool, BeforeValidator(_bool), _schema(anyOf=[{"type": "boolean"}, ENV_REF])]


def seconds(max_s: float, min_s: float = 0.0) -> Any:
    """Seconds from `90s`, `5m`, `1h30m`, `500ms` or a number; longer than `min_s`, at most `max_s`."""

    def check(value: Any) -> float:
        try:
            got = parse_duration(value)
        except ValueError as exc:
            fail(f"{exc}, got {{got}}")
        if got <= min_s:
            fail(f"must be longer than {format_duration(min_s)}" if min_s else "must be longer than zero")
        if got > max_s:
            fail(f"too long: at most {format_duration(max_s)}")
        return got

    return Annotated[float, BeforeValidator(check), _schema(type=["string", "number"], examples=["90s", "5m", "1h"])]


def percent(max_fraction: float = 1.0, *, positive: bool = False) -> Any:
    def check(value: Any) -> float:
        try:
            fraction = parse_percent(value, max_fraction)
        except ValueError as exc:
            fail(f"{exc}, got {{got}}")
        if positive and fraction == 0:
            fail("must be more than 0%")
        return fraction

    return Annotated[float, BeforeValidator(check), _schema(type=["string", "number"], examples=["50%", 0.5])]


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


def check_url(value: Any, info: Any) -> str:
    if not isinstance(value, str):
        fail(f"expected a URL, got {kind(value)}")
    if not is_http_url(value):
        fail("not a URL (expected http://host/... or https://host/...), got {got}")
    with contextlib.suppress(ValueError):
        learn(urlsplit(value.strip()).password or "", info)  # http://user:pass@host
    return value.strip()


Url = Annotated[str, BeforeValidator(check_url), AfterValidator(keep), _schema(type="string", format="uri")]


def deferred(value: Unset, info: Any) -> str:
    """A credential whose variables are unset under `secrets="defer"`: kept as written, noted, not judged."""
    if (ctx := _ctx(info)) is not None:
        ctx.deferred.add(value.loc)
    return Secret(value)


def _credential(value: Any, info: Any, check: Callable[[str], Any] | None = None) -> str:
    if isinstance(value, Unset):
        return deferred(value, info)
    if not isinstance(value, str):
        fail(f"expected a string, got {kind(value)}")
    learn(value, info)  # first: any later message about this value must mask it
    if not value:
        fail("must not be empty")
    if "\n" in value or "\r" in value:
        fail("must be one line")
    if check is not None:
        check(value)
    return Secret(value)


def secret_text(check: Callable[[str], Any] | None = None) -> Any:
    """A credential: never echoed, remembered as a secret so every message and repr masks it
    (a `Secret`, kept as is: pydantic would turn a `str` subclass back into a plain `str`)."""
    return Annotated[Any, PlainValidator(lambda v, info: _credential(v, info, check)), _schema(type="string")]


SecretText = secret_text()
# An optional one: empty (`${KEY:-}`) means absent.
OptionalSecret = Annotated[SecretText | None, BeforeValidator(lambda v: None if v == "" else v)]


def _header_name(value: Any) -> str:
    if not isinstance(value, str) or not _HEADER_NAME.fullmatch(value):
        fail("not a valid HTTP header name")
    return value


def _header_value(value: Any, info: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        fail(f"expected a string, got {kind(value)}")
    return _credential(value if isinstance(value, str) else str(value), info) if str(value) else Secret("")


def read_only(value: Mapping[Any, Any]) -> Mapping[Any, Any]:
    return MappingProxyType(dict(value))


# HTTP headers: values are secrets (they often carry auth).
Headers = Annotated[
    Mapping[
        Annotated[str, BeforeValidator(_header_name)],
        Annotated[Any, PlainValidator(_header_value), _schema(type=["string", "number"])],
    ],
    AfterValidator(read_only),
]
EMPTY: Mapping[str, Any] = MappingProxyType({})


def empty() -> Mapping[str, Any]:
    return EMPTY


def _json_map(value: Any, info: Any) -> Mapping[str, Any]:
    """A read-only mapping of JSON values (they go into request bodies)."""
    if not isinstance(value, Mapping):
        fail(f"expected a mapping, got {kind(value)}")
    return MappingProxyType(_json(dict(value), (), info))


def _json(value: Any, at: tuple, info: Any) -> Any:
    if isinstance(value, str):
        return keep(value, info)
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            fail("must be a finite number (JSON has no NaN or infinity)", at=at)
        return value
    if isinstance(value, list):
        return [_json(v, (*at, i), info) for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        for k in value:
            if not isinstance(k, str) or not k:
                fail("keys must be non-empty strings", at=(*at, k))
        return {k: _json(v, (*at, k), info) for k, v in value.items()}
    fail(f"expected a JSON value, got {kind(value)}", at=at)


Json = Annotated[Mapping[str, Any], PlainValidator(_json_map, json_schema_input_type=dict[str, Any])]


def _nonempty(values: Any) -> Any:
    if not values:
        fail("must not be empty")
    return values


# Not `Field(min_length=1)`: pydantic would also call a list empty when its only item is invalid.
NonEmpty = AfterValidator(_nonempty)


def unique(values: tuple[Any, ...]) -> tuple[Any, ...]:
    for i, value in enumerate(values):
        if value in values[:i]:
            fail("duplicate {got}", at=(i,), value=value)
    return values


Names = Annotated[tuple[Name, ...], AfterValidator(unique)]
Texts = Annotated[tuple[Text, ...], AfterValidator(unique)]


def _timestamp(value: Any) -> datetime:
    """An aware UTC datetime from ISO 8601 (`2026-12-01T06:00:00Z`); a bare date is midnight UTC."""
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            fail("not an ISO 8601 time like 2026-12-01T06:00:00Z, got {got}")
        value = parsed.date() if len(value.strip()) <= 10 else parsed
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            fail("needs a time zone: end it with Z for UTC")
        try:
            return value.astimezone(UTC)
        except (OverflowError, ValueError):
            fail("out of range")
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    fail(f"expected an ISO 8601 time, got {kind(value)}")


Timestamp = Annotated[datetime, PlainValidator(_timestamp), _schema(type="string", format="date-time")]


def alias(name: str, default: Any = ..., **kw: Any) -> Any:
    """A field the file spells `name` (`interval`) while the value is `interval_s`."""
    return Field(default, validation_alias=name, **kw)


__all__ = ["Field", "field"]
