"""`${VAR}`, `${VAR:-default}` and `$${` in the string values of the parsed tree (not in keys).

Interpolation runs after parsing, so a value with quotes, colons or `#` in it
can never break the YAML, and a number written as `${N}` arrives as `EnvText`
that numeric fields accept. A value from a variable named like a secret
(`*_KEY`, `*_TOKEN`...) becomes a secret, masked wherever it could show.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SECRET_NAME_WORDS = ("KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL")
_REF = re.compile(r"\$\$\{|\$\{([^}]*)\}|\$\{")
_VAR = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?", re.DOTALL)
# A YAML alias bomb or a self-referencing anchor expands into an enormous or
# endless tree; a real config is a few hundred nodes and a handful deep.
MAX_NODES = 100_000
MAX_DEPTH = 40


class EnvText(str):
    """A string that `${VAR}` interpolation produced (so a number may arrive as text)."""

    __slots__ = ()


class Unset(EnvText):
    """A value whose variables are unset, left as written (`defer`): a credential field takes it
    and notes it; anywhere else the loader reports the variables as it would have."""

    def __new__(cls, text: str, loc: tuple, names: list[str]) -> Unset:
        value = super().__new__(cls, text)
        value.loc, value.names = loc, tuple(names)
        return value


@dataclass
class Interpolated:
    tree: Any
    errors: list[tuple[tuple, str]] = field(default_factory=list)  # (loc, message)
    secrets: set[str] = field(default_factory=set)
    unset: dict[tuple, tuple[str, ...]] = field(default_factory=dict)  # loc -> variables left as written


def is_secret_name(name: str) -> bool:
    """A variable named like a secret: one of its `_`-separated words is a
    secret word (`OPENAI_API_KEY`, `APIKEY`, `DB_PASSWORDS`). `FIRSTTOKEN_AGENT`
    is not one just because "TOKEN" hides inside "FIRSTTOKEN"."""
    words = set(name.upper().split("_"))
    return any({secret, secret + "S", "API" + secret} & words for secret in SECRET_NAME_WORDS)


def interpolate(tree: Any, env: Mapping[str, str], *, defer: bool = False) -> Interpolated:
    """`defer`: an unset variable without a default is left as written (see `Unset`), not an error."""
    out = Interpolated(None)
    budget = [MAX_NODES]
    too_deep: list[tuple] = []

    def walk(value: Any, loc: tuple) -> Any:
        budget[0] -= 1
        if budget[0] < 0 or too_deep:
            return None
        if len(loc) > MAX_DEPTH:
            too_deep.append(loc)
            return None
        if isinstance(value, str):
            return _substitute(out, value, loc, env, defer)
        if isinstance(value, Mapping):
            return {k: walk(v, (*loc, k)) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, (*loc, i)) for i, v in enumerate(value)]
        return value

    out.tree = walk(tree, ())
    if too_deep:
        out.errors.append((too_deep[0][:8], f"nested more than {MAX_DEPTH} levels deep (a YAML alias loop?)"))
    if budget[0] < 0:
        out.errors.append(((), f"the document is too large (over {MAX_NODES} values; a YAML alias loop?)"))
    return out


def _substitute(out: Interpolated, text: str, loc: tuple, env: Mapping[str, str], defer: bool) -> str:
    if "$" not in text:
        return text
    found = False
    unset: list[str] = []

    def replace(match: re.Match[str]) -> str:
        nonlocal found
        if match.group(0) == "$${":
            return "${"
        found = True
        body = match.group(1)
        if body is None:
            out.errors.append((loc, "unterminated ${ (write $${ for a literal ${)"))
            return ""
        ref = _VAR.fullmatch(body)
        if not ref:
            shown = repr("${" + body[:40] + "}")
            out.errors.append((loc, f"invalid variable reference {shown}: expected ${{NAME}} or ${{NAME:-default}}"))
            return ""
        name, default = ref.group(1), ref.group(2)
        value = None if env.get(name) is None else str(env[name])
        if value is None or (value == "" and default is not None):
            if default is None:
                if defer:
                    unset.append(name)
                    return match.group(0)
                out.errors.append((loc, f"environment variable {name} is not set"))
                return ""
            value = default
        if is_secret_name(name) and value:
            out.secrets.add(value)
        return value

    result = _REF.sub(replace, text)
    if unset:
        out.unset[loc] = tuple(unset)
        return Unset(result, loc, unset)
    return EnvText(result) if found else result
