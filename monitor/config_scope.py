"""Scopes: `match:` filters (alerts and silences) and `silences:` (DESIGN §5).

A silence mutes notifications for the targets its `match:` fits until its
`until:`; measurement goes on.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime
from types import MappingProxyType
from typing import Any

from monitor.config_reader import Reader, did_you_mean, join, kind
from monitor.config_schema import SCOPE_LABELS, Silence

SILENCE_KEYS = ("match", "starts", "until", "reason")
_GLOB = set("*?[")


def build_matchable(
    providers: Mapping[str, Any], declared_providers: set[str], prompts: set[str]
) -> dict[str, set[str]]:
    """The names a `match:` may spell out literally. When a provider failed to
    load its models and regions are unknown, so those labels go unchecked."""
    complete = set(providers) == declared_providers
    return {
        "provider": set(declared_providers),
        "model": {m for p in providers.values() for m in p.models} if complete else set(),
        "region": {g for p in providers.values() for g in p.regions} if complete else set(),
        "prompt": set(prompts),
    }


def build_match(r: Reader, s: Mapping[str, Any], path: str, scope_names: Mapping[str, set[str]]) -> Mapping[str, str]:
    """A scope filter; a literal (glob-free) name must exist, to catch typos that would match nothing."""
    match = r.str_map(s, "match", path, keys=SCOPE_LABELS)
    for label, pattern in match.items():
        known = scope_names.get(label, set())
        if not pattern:
            r.error(join(join(path, "match"), label), "must not be empty")
        elif not (_GLOB & set(pattern)) and known and pattern not in known:
            r.error(
                join(join(path, "match"), label), f"unknown {label} {r.show(pattern)}{did_you_mean(pattern, known)}"
            )
    return MappingProxyType(match)


def build_silences(r: Reader, value: Any, scope_names: Mapping[str, set[str]]) -> tuple[Silence, ...]:
    out: list[Silence] = []
    for path, spec in r.items({"silences": value}, "silences", ""):
        s = r.mapping(spec, path, SILENCE_KEYS, required=("match", "until"))
        if s is None:
            continue
        before = len(r.errors)
        match = build_match(r, s, path, scope_names)
        if isinstance(s.get("match"), Mapping) and not s["match"]:
            r.error(join(path, "match"), f"must name at least one of {', '.join(SCOPE_LABELS)}")
        until = timestamp(r, s.get("until"), join(path, "until"))
        starts = timestamp(r, s.get("starts"), join(path, "starts"))
        if until and starts and starts >= until:
            r.error(join(path, "until"), "must be after starts")
        reason = r.text(s, "reason", path, "", max_len=1000)
        if len(r.errors) == before and until is not None:
            out.append(Silence(match=match, until=until, starts=starts, reason=reason))
    return tuple(out)


def timestamp(r: Reader, value: Any, path: str) -> datetime | None:
    """An aware UTC datetime from ISO 8601 (`2026-12-01T06:00:00Z`); a bare date is midnight UTC."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            r.error(path, f"not an ISO 8601 time like 2026-12-01T06:00:00Z, got {r.show(value)}")
            return None
        value = parsed.date() if len(value.strip()) <= 10 else parsed
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            r.error(path, "needs a time zone: end it with Z for UTC")
            return None
        try:
            return value.astimezone(UTC)
        except (OverflowError, ValueError):
            r.error(path, "out of range")
            return None
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    r.error(path, f"expected an ISO 8601 time, got {kind(value)}")
    return None
