"""YAML text to a plain tree, then `${VAR}` interpolation in its string scalars.

Interpolation runs after parsing, on string values only (not keys): a value
with quotes, colons or `#` in it can never break the YAML, and a number
written as `${N}` arrives as `EnvText` that numeric fields accept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from monitor.config_reader import EnvText, Reader, index, join
from monitor.config_schema import ConfigError
from monitor.redact import redact

SECRET_NAME_WORDS = ("KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL")
_REF = re.compile(r"\$\$\{|\$\{([^}]*)\}|\$\{")
_VAR = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?", re.DOTALL)
# A YAML alias bomb or a self-referencing anchor expands into an enormous or
# endless tree; a real config is a few hundred nodes and a handful deep.
MAX_NODES = 100_000
MAX_DEPTH = 40


# libyaml's parser when present: ten times faster, same safe constructor.
_SafeBase = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_SafeBase):
    """SafeLoader with YAML 1.2 booleans and duplicate keys refused.

    YAML 1.1 reads `no`, `on`, `off`, `y` as booleans (a region `no` or a model
    `on` silently becomes False); a duplicated provider key silently drops
    the first definition.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:  # unhashable: the base class reports it
                continue
            if duplicate:
                shown = repr(key)[:60]
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {shown}", key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


_BOOL = "tag:yaml.org,2002:bool"
_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != _BOOL]
    for first, resolvers in _SafeBase.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


def parse_yaml(text: str) -> Any:
    """The document's tree, or ConfigError with one line naming line and column."""
    try:
        return yaml.load(text, Loader=_Loader)  # a SafeLoader subclass: no arbitrary objects
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "syntax error"
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise ConfigError([_one_line(f"{where}invalid YAML: {problem}")]) from None
    except RecursionError:
        raise ConfigError(["invalid YAML: nested too deeply"]) from None
    except Exception as exc:  # ReaderError, bad timestamps (ValueError) ...
        raise ConfigError([_one_line(f"invalid YAML: {exc}")]) from None


def _one_line(text: str) -> str:
    return redact(" ".join(text.split()))[:300]


def is_secret_name(name: str) -> bool:
    """A variable named like a secret: one of its `_`-separated words is a
    secret word (`OPENAI_API_KEY`, `APIKEY`, `DB_PASSWORDS`). `FIRSTTOKEN_AGENT`
    is not one just because "TOKEN" hides inside "FIRSTTOKEN"."""
    words = set(name.upper().split("_"))
    return any({secret, secret + "S", "API" + secret} & words for secret in SECRET_NAME_WORDS)


def interpolate(r: Reader, tree: Any, env: Mapping[str, str]) -> Any:
    """A copy of `tree` with `${VAR}`, `${VAR:-default}` and `$${` resolved in string values."""
    budget = [MAX_NODES]
    too_deep: list[str] = []

    def walk(value: Any, path: str, depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0 or too_deep:
            return None
        if depth > MAX_DEPTH:
            too_deep.append(path)
            return None
        if isinstance(value, str):
            return _substitute(r, value, path, env)
        if isinstance(value, Mapping):
            return {k: walk(v, join(path, k), depth + 1) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, index(path, i), depth + 1) for i, v in enumerate(value)]
        return value

    out = walk(tree, "", 0)
    if too_deep:
        r.error(too_deep[0][:120], f"nested more than {MAX_DEPTH} levels deep (a YAML alias loop?)")
    r.broken |= r.failed
    if budget[0] < 0:
        r.error("", f"the document is too large (over {MAX_NODES} values; a YAML alias loop?)")
    return out


def _substitute(r: Reader, text: str, path: str, env: Mapping[str, str]) -> str:
    if "$" not in text:
        return text
    found = False

    def replace(match: re.Match[str]) -> str:
        nonlocal found
        if match.group(0) == "$${":
            return "${"
        found = True
        body = match.group(1)
        if body is None:
            r.interpolation_failed(path, "unterminated ${ (write $${ for a literal ${)")
            return ""
        ref = _VAR.fullmatch(body)
        if not ref:
            r.interpolation_failed(
                path, f"invalid variable reference {'${' + body[:40] + '}'!r}: expected ${{NAME}} or ${{NAME:-default}}"
            )
            return ""
        name, default = ref.group(1), ref.group(2)
        value = env.get(name)
        value = None if value is None else str(value)
        if value is None or (value == "" and default is not None):
            if default is None:
                r.interpolation_failed(path, f"environment variable {name} is not set")
                return ""
            value = default
        if is_secret_name(name) and value:
            r.secrets.add(value)
        return value

    result = _REF.sub(replace, text)
    return EnvText(result) if found else result
