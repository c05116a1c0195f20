"""Every key of firsttoken.yaml has a one-line description in its JSON Schema (monitor/config/descriptions.py)."""

from __future__ import annotations

from monitor.config.descriptions import DESCRIPTIONS, NOTIFIER, ROOT
from monitor.config.editor import json_schema


def _sections(schema):
    yield ROOT, schema
    yield from schema["$defs"].items()


def test_every_key_has_a_description():
    missing = [
        f"{title}.{key}"
        for title, section in _sections(json_schema())
        for key, prop in section.get("properties", {}).items()
        if not prop.get("description")
    ]
    assert missing == [], f"add a line for each to monitor/config/descriptions.py: {missing}"


def test_no_description_names_a_key_that_is_gone():
    schema = json_schema()
    known = {title: set(section.get("properties", {})) for title, section in _sections(schema)}
    stale = [f"{t}.{k}" for t, keys in DESCRIPTIONS.items() for k in keys if k not in known.get(t, set())]
    assert stale == []
    notifier_keys = set().union(*(known[t] for t in known if t.endswith("Config")))
    assert set(NOTIFIER) <= notifier_keys
