"""YAML text to a plain tree: safe, YAML 1.2 booleans, duplicate keys refused, one-line errors."""

from __future__ import annotations

import re
from typing import Any

import yaml

from monitor.config.errors import ConfigError
from monitor.redact import redact

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
