"""`prompts:` and `providers:`: what is sent, and where to."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from monitor.config_reader import NAME_HINT, NAME_RE, EnvText, Reader, did_you_mean, index, join, kind
from monitor.config_requests import DEFAULT_SYNTHETIC_QUESTION, build_extras, build_reasoning
from monitor.config_schema import DAY, HOUR, Prompt, Provider
from monitor.protocols.base import Message

# The protocols of DESIGN §2. A config naming one loads even while its module
# is not in this build yet; probing it then fails at request time, not here.
DESIGN_PROTOCOLS = (
    "openai-chat",
    "openai-responses",
    "azure-openai",
    "anthropic",
    "gemini",
    "bedrock-converse",
    "ollama",
)
PROMPT_KEYS = (
    "messages",
    "file",
    "system",
    "max_tokens",
    "temperature",
    "tools",
    "tool_choice",
    "response_format",
    "synthetic",
    "expect",
    "reasoning",
)
PROVIDER_KEYS = (
    "protocol",
    "api_key",
    "regions",
    "models",
    "headers",
    "params",
    "options",
    "cache_bust",
    "interval",
    "timeout",
    "ttft_timeout",
    "status_page",
    "reasoning",
)
ROLES = ("system", "user", "assistant")
MAX_TOKENS = 1_000_000
DEFAULT_MAX_TOKENS = 64
MAX_PROMPT_CHARS = 2_000_000  # ~500k tokens: beyond any context window


def registered_protocols() -> list[str]:
    try:
        return list(protocol_names())
    except Exception:  # a broken protocol module must not turn config errors into a traceback
        return []


def protocol_names() -> list[str]:
    from monitor.protocols import protocol_names as names

    return names()


def named_entries(r: Reader, value: Any, path: str) -> list[tuple[str, str, Any]]:
    """(name, path, spec) for a mapping of user-chosen names; bad names reported."""
    if value is None:
        return []
    m = r.mapping(value, path)
    out = []
    for name, spec in (m or {}).items():
        if NAME_RE.fullmatch(name):
            out.append((name, join(path, name), spec))
        else:
            r.error(join(path, name), f"invalid name: {NAME_HINT}")
    return out


# ------------------------------------------------------------------- prompts
def build_prompts(r: Reader, value: Any, base_dir: Path) -> dict[str, Prompt]:
    prompts: dict[str, Prompt] = {}
    for name, path, spec in named_entries(r, value, "prompts"):
        s = r.mapping(spec, path, PROMPT_KEYS)
        if s is None:
            continue
        before = len(r.errors)
        has_messages, has_file = s.get("messages") is not None, s.get("file") is not None
        synthetic = s.get("synthetic") is not None  # its question may be the default one
        if (has_messages and has_file) or not (has_messages or has_file or synthetic):
            r.error(path, "give exactly one of messages or file")
        system = r.text(s, "system", path, max_len=MAX_PROMPT_CHARS)
        messages = [Message("system", system)] if system else []
        if has_messages:
            messages += _messages(r, s, path, has_system=bool(system))
        elif has_file:
            text = read_prompt_file(r, s["file"], join(path, "file"), base_dir)
            if text is not None:
                messages.append(Message("user", text))
        elif synthetic and len(r.errors) == before:
            messages.append(Message("user", DEFAULT_SYNTHETIC_QUESTION))
        max_tokens = r.number(s, "max_tokens", path, DEFAULT_MAX_TOKENS, lo=1, hi=MAX_TOKENS, integer=True)
        extras = build_extras(r, s, path)
        if all(m.role == "system" for m in messages):
            if len(r.errors) == before:
                r.error(path, "needs a user message, not only a system one")
        elif messages and len(r.errors) == before:
            file = s["file"] if has_file and isinstance(s.get("file"), str) else None
            prompts[name] = Prompt(name, tuple(messages), max_tokens, file, **extras)
    return prompts


def _messages(r: Reader, s: Mapping[str, Any], path: str, has_system: bool) -> list[Message]:
    out: list[Message] = []
    items = r.items(s, "messages", path)
    if not items and isinstance(s.get("messages"), list):
        r.error(join(path, "messages"), "must not be empty")
    for mpath, item in items:
        m = r.mapping(item, mpath, ("role", "content"), required=("role", "content"))
        if m is None:
            continue
        role = r.text(m, "role", mpath)
        content = r.text(m, "content", mpath, max_len=MAX_PROMPT_CHARS)
        if role is not None and role not in ROLES:
            r.error(join(mpath, "role"), f"unknown role {r.show(role)}: expected one of {', '.join(ROLES)}")
        elif role == "system" and has_system:
            r.error(join(mpath, "role"), "a system message is also given by system:")
        elif role is not None and content is not None:
            out.append(Message(role, content))
    return out


def read_prompt_file(r: Reader, value: Any, path: str, base_dir: Path) -> str | None:
    """The file's text; it must sit inside the config's directory."""
    if not isinstance(value, str) or not value.strip():
        r.error(path, f"expected a file name, got {kind(value) if not isinstance(value, str) else 'an empty string'}")
        return None
    try:
        base = Path(base_dir).resolve()
        wanted = Path(value)
        full = (wanted if wanted.is_absolute() else base / wanted).resolve()
    except (OSError, ValueError, RuntimeError):
        r.error(path, f"invalid file name {r.show(value)}")
        return None
    # Resolving first also follows symlinks: a link inside pointing outside is refused too.
    if not full.is_relative_to(base):
        r.error(path, f"path traversal: {r.show(value)} is outside the config's directory")
        return None
    try:
        if not full.is_file():
            r.error(path, f"no such file {r.show(value)} (relative to the config's directory)")
            return None
        if full.stat().st_size > MAX_PROMPT_CHARS * 4:
            r.error(path, f"file {r.show(value)} is too large")
            return None
        text = full.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        r.error(path, f"file {r.show(value)} is not UTF-8 text")
        return None
    except (OSError, ValueError) as exc:
        r.error(path, f"cannot read {r.show(value)}: {getattr(exc, 'strerror', None) or type(exc).__name__}")
        return None
    if not text.strip():
        r.error(path, f"file {r.show(value)} is empty")
        return None
    if len(text) > MAX_PROMPT_CHARS:
        r.error(path, f"file {r.show(value)} is too large")
        return None
    return text


# ----------------------------------------------------------------- providers
def build_providers(r: Reader, value: Any) -> dict[str, Provider]:
    registered = registered_protocols()
    known = sorted(set(registered) | set(DESIGN_PROTOCOLS))
    providers: dict[str, Provider] = {}
    for name, path, spec in named_entries(r, value, "providers"):
        s = r.mapping(spec, path, PROVIDER_KEYS, required=("protocol", "regions", "models"))
        if s is None:
            continue
        errors_before = len(r.errors)
        protocol = r.text(s, "protocol", path)
        if protocol is not None and protocol not in known:
            r.error(
                join(path, "protocol"),
                f"unknown protocol {r.show(protocol)}{did_you_mean(protocol, known)}; known: {', '.join(known)}",
            )
        api_key = r.secret(s, "api_key", path)
        regions = _regions(r, s, path)
        canonical = _models(r, s, path)
        options = json_map(r, s, "options", path)
        status_page = r.url(s["status_page"], join(path, "status_page")) if s.get("status_page") is not None else None
        provider = Provider(
            name=name,
            protocol=protocol or "",
            regions=MappingProxyType(regions),
            models=tuple(canonical),
            canonical=MappingProxyType(canonical),
            status_page=status_page,
            reasoning=build_reasoning(r, s, path),
            api_key=api_key,
            headers=MappingProxyType(r.header_map(s, "headers", path)),
            params=json_map(r, s, "params", path),
            options=options,
            cache_bust=r.boolean(s, "cache_bust", path, None),
            interval_s=r.duration(s, "interval", path, None, max_s=DAY),
            timeout_s=r.duration(s, "timeout", path, None, max_s=HOUR),
            ttft_timeout_s=r.duration(s, "ttft_timeout", path, None, max_s=HOUR),
        )
        if protocol in registered:
            for line in protocol_errors(protocol, options, api_key is not None):
                field, sep, message = line.partition(": ")
                r.error(f"{path}.{field}" if sep else path, message if sep else line)
        if len(r.errors) == errors_before and regions and canonical:
            providers[name] = provider
    return providers


def protocol_errors(protocol: str, options: Mapping[str, Any], has_api_key: bool) -> list[str]:
    from monitor.protocols import get_protocol

    try:
        found = get_protocol(protocol).config_errors(dict(options), has_api_key)
        return [str(line) for line in found or ()]
    except Exception as exc:  # the protocol's own bug must not hide the other errors
        return [f"options: could not be checked by the {protocol} protocol ({type(exc).__name__})"]


def _regions(r: Reader, s: Mapping[str, Any], path: str) -> dict[str, str]:
    regions: dict[str, str] = {}
    sub = join(path, "regions")
    if s.get("regions") is None:
        return regions
    entries = named_entries(r, s["regions"], sub)
    if not entries and isinstance(s["regions"], Mapping) and not s["regions"]:
        r.error(sub, "must name at least one region")
    for region, rpath, url in entries:
        checked = r.url(url, rpath)
        if checked is not None:
            regions[region] = checked
    return regions


def _models(r: Reader, s: Mapping[str, Any], path: str) -> dict[str, str]:
    """id -> canonical name. An entry is the provider's id, or `{name: <id>, as: <canonical>}`
    when the provider spells a model differently from the others (for comparing across them)."""
    sub = join(path, "models")
    value = s.get("models")
    if not isinstance(value, list):  # absent, or not a list: str_list says which
        r.str_list(s, "models", path, required=True)
        return {}
    if not value:
        r.error(sub, "must not be empty")
    out: dict[str, str] = {}
    for i, item in enumerate(value):
        ipath = index(sub, i)
        if isinstance(item, Mapping):
            m = r.mapping(item, ipath, ("name", "as"), required=("name",))
            model_id = _model_name(r, m.get("name"), join(ipath, "name")) if m and m.get("name") is not None else None
            alias = _model_name(r, m.get("as"), join(ipath, "as")) if m and m.get("as") is not None else model_id
        else:
            model_id = alias = _model_name(r, item, ipath)
        if model_id is None or alias is None:
            continue
        if model_id in out:
            r.error(ipath, f"duplicate {r.show(model_id)}")
        else:
            out[model_id] = alias
    return out


def _model_name(r: Reader, value: Any, path: str) -> str | None:
    model = r.check_text(value, path, max_len=256)
    if model is not None and any(c.isspace() or not c.isprintable() for c in model):
        r.error(path, f"invalid model name {r.show(model)}: no spaces")
        return None
    return model


def json_map(r: Reader, m: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any]:
    """A read-only mapping of JSON values (they go into request bodies)."""
    value, sub = m.get(key), join(path, key)
    if value is None:
        return MappingProxyType({})
    top = r.mapping(value, sub)
    if top is None:
        return MappingProxyType({})
    return MappingProxyType({k: _json_value(r, v, join(sub, k)) for k, v in top.items()})


def _json_value(r: Reader, value: Any, path: str) -> Any:
    if isinstance(value, EnvText):
        return r.keep(value)
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            r.error(path, "must be a finite number (JSON has no NaN or infinity)")
        return value
    if isinstance(value, list):
        return [_json_value(r, v, index(path, i)) for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        inner = r.mapping(value, path) or {}
        return {k: _json_value(r, v, join(path, k)) for k, v in inner.items()}
    r.error(path, f"expected a JSON value, got {kind(value)}")
    return None
