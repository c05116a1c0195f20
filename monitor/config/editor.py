"""The JSON Schema of `firsttoken.yaml`, for editors (`firsttoken schema`, docs/firsttoken.schema.json).

An example starts with `# yaml-language-server: $schema=../docs/firsttoken.schema.json`
and the editor completes keys and flags mistakes as you type. The schema
says what the file may hold; the loader still judges what a schema cannot
(references between sections, prompt files, the matrix).
"""

from __future__ import annotations

import json
import warnings
from typing import Any, Union

from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema

from monitor.config.descriptions import ROOT, describe
from monitor.config.notifiers import notifier_types
from monitor.config.schema import FileSpec, registered_protocols

DIALECT = "https://json-schema.org/draft/2020-12/schema"


class _Generator(GenerateJsonSchema):
    def field_title_should_be_set(self, schema: Any) -> bool:
        return False  # `Interval S` titles are noise beside the key itself


def json_schema() -> dict[str, Any]:
    with warnings.catch_warnings():  # read-only mapping defaults are not JSON: they are left out
        warnings.simplefilter("ignore")
        schema = TypeAdapter(FileSpec).json_schema(by_alias=True, mode="validation", schema_generator=_Generator)
        # A notifier entry is one of the notifier modules' configs, whichever are installed.
        kinds = tuple(notifier_types().values())
        union = TypeAdapter(Union[kinds]).json_schema(by_alias=True, schema_generator=_Generator)  # noqa: UP007
    schema["$defs"].pop("NotifierConfig", None)
    schema["$defs"].update(union.pop("$defs", {}))
    # The discovered names as enums, so an editor flags `protocol: opeani-chat` or `type: webhok`
    # (and offers the right ones); the loader discovers them the same way.
    types = {"enum": list(notifier_types()), "description": describe("", "type", notifier=True)}
    schema["properties"]["notifiers"]["items"] = {
        "type": "object",
        "required": ["type"],
        "properties": {"type": types},
        **union,
    }
    schema["$defs"]["Provider"]["properties"]["protocol"] = {"type": "string", "enum": sorted(registered_protocols())}
    notifier_defs = {cls.__name__ for cls in kinds}
    _describe(schema, ROOT, notifier=False)
    for name, definition in schema["$defs"].items():
        _describe(definition, name, notifier=name in notifier_defs)
    return {"$schema": DIALECT, **schema, "title": ROOT}


def _describe(definition: dict[str, Any], title: str, *, notifier: bool) -> None:
    for key, prop in definition.get("properties", {}).items():
        text = describe(title, key, notifier=notifier)
        if text and "description" not in prop:
            prop["description"] = text


def json_schema_text() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"
