"""The configuration reference, from the JSON Schema of firsttoken.yaml (`monitor.config.editor`).

Pure: a schema in, Markdown out. Every key gets a row with its full path (`providers.<name>.regions`),
its type, its default and its description; `key_paths` lists the same paths, for the test that
holds the page to the schema.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from monitor.reference.markdown import code, table
from monitor.units import format_duration

ENV_REF_PATTERN = "\\$\\{"
DURATION_EXAMPLE = "5m"

INTRO = """# Configuration reference

Every key of `firsttoken.yaml`, generated from its JSON Schema when the site is built
(`firsttoken schema` prints the same schema; `docs/firsttoken.schema.json` ships it for editors).
A path reads `providers.<name>.regions`: `<name>` is a name you choose, `[]` an entry of a list.
Durations take `90s`, `5m`, `1h`, `7d` or a number of seconds; percentages take `50%` or a fraction.
Most scalar values may also be `${VAR}` from the environment. The guide to the file is
[Configuration](../configuration.md); what a schema cannot say (references between sections,
prompt files, the matrix) is checked by `firsttoken check-config`.
"""


@dataclass(frozen=True)
class Row:
    path: str
    type: str
    default: str
    description: str


def _ref_name(prop: Mapping[str, Any]) -> str | None:
    ref = prop.get("$ref")
    return ref.rsplit("/", 1)[1] if isinstance(ref, str) else None


def type_text(prop: Mapping[str, Any]) -> str:
    """A short human type: `string`, `duration`, `one of a, b`, `list of Prompt`, `map of name → URL`."""
    if (name := _ref_name(prop)) is not None:
        return name
    if "enum" in prop:
        return "one of " + ", ".join(json.dumps(v) for v in prop["enum"])
    if "const" in prop:
        return json.dumps(prop["const"])
    if "anyOf" in prop:
        parts = [p for p in prop["anyOf"] if p.get("pattern") != ENV_REF_PATTERN]
        optional = any(p.get("type") == "null" for p in parts)
        text = " or ".join(dict.fromkeys(type_text(p) for p in parts if p.get("type") != "null"))
        return f"{text} (optional)" if optional else text
    if DURATION_EXAMPLE in prop.get("examples", ()):
        return "duration"
    kind = prop.get("type")
    if kind == "array":
        return "list of " + type_text(prop.get("items", {}))
    if kind == "object":
        value = _map_value(prop)
        return f"map of name → {type_text(value)}" if value is not None else "object"
    if isinstance(kind, list):
        return " or ".join(kind)
    if prop.get("format") == "uri":
        return "URL"
    return kind or "any"


def _map_value(prop: Mapping[str, Any]) -> Mapping[str, Any] | None:
    pattern = prop.get("patternProperties")
    if pattern:
        return next(iter(pattern.values()))
    extra = prop.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def default_text(prop: Mapping[str, Any]) -> str:
    if "default" not in prop:
        return "required" if prop.get("_required") else "—"
    value = prop["default"]
    if isinstance(value, dict | list) and value:
        return "see below"
    if value is None or value in ({}, []):
        return "none" if value is None else "empty"
    if DURATION_EXAMPLE in json.dumps(prop) and isinstance(value, int | float) and not isinstance(value, bool):
        return format_duration(float(value))
    return code(json.dumps(value))


def _children(prop: Mapping[str, Any], defs: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(path suffix, object schema) of what a key holds: a section, entries of a list, values of a map."""
    if (name := _ref_name(prop)) is not None:
        yield "", defs[name]
    elif "anyOf" in prop:
        for part in prop["anyOf"]:
            yield from _children(part, defs)
    elif prop.get("type") == "array":
        for suffix, child in _children(prop.get("items", {}), defs):
            yield "[]" + suffix, child
    elif prop.get("type") == "object" and (value := _map_value(prop)) is not None:
        for suffix, child in _children(value, defs):
            yield ".<name>" + suffix, child


def rows(schema: Mapping[str, Any]) -> Iterator[Row]:
    defs = schema.get("$defs", {})

    def walk(section: Mapping[str, Any], prefix: str, seen: tuple[int, ...]) -> Iterator[Row]:
        required = set(section.get("required", ()))
        for key, prop in section.get("properties", {}).items():  # the schema's order: the models' own
            path = f"{prefix}{key}"
            marked = {**prop, "_required": key in required}
            yield Row(path, type_text(prop), default_text(marked), prop.get("description", ""))
            for suffix, child in _children(prop, defs):
                if id(child) in seen:
                    continue
                variant = _variant(child)
                yield from walk(child, f"{path}{suffix}{variant}.", (*seen, id(child)))

    yield from walk(schema, "", (id(schema),))


def _variant(section: Mapping[str, Any]) -> str:
    """A union member picked by a constant (a notifier's `type:`) is named in its paths."""
    tag = section.get("properties", {}).get("type", {})
    return f"(type={tag['const']})" if "const" in tag else ""


def key_paths(schema: Mapping[str, Any]) -> list[str]:
    return [row.path for row in rows(schema)]


def page(schema: Mapping[str, Any]) -> str:
    """The whole page: one section per top-level key, its own keys and everything under them."""
    by_section: dict[str, list[Row]] = {}
    for row in rows(schema):
        by_section.setdefault(row.path.split(".")[0].split("[")[0], []).append(row)
    out = [INTRO]
    for section, section_rows in by_section.items():
        top = section_rows[0]
        out.append(f"\n## `{section}`\n\n{top.description}\n\n")
        out.append(
            table(
                ("key", "type", "default", "description"),
                ((code(r.path), r.type, r.default, r.description) for r in section_rows),
            )
        )
    return "".join(out)
