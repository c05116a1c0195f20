"""The JSON Schema for editors: `firsttoken schema` prints it, docs/ ships it, the examples point at it."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date, datetime
from pathlib import Path

import jsonschema
import pytest
import yaml

from tests.config_helpers import DESIGN_EXAMPLE

REPO = Path(__file__).resolve().parents[2]
SCHEMA_FILE = REPO / "docs" / "firsttoken.schema.json"
EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))
# Beside each example (examples/firsttoken.schema.json, and the repository root's for a copy made there,
# are links to docs/'s), so the line still works once the file is copied (`firsttoken schema > …` elsewhere).
COMMENT = "# yaml-language-server: $schema=firsttoken.schema.json"


def _as_editor_reads_it(text: str):
    """The tree an editor validates: YAML timestamps are strings to it."""

    def plain(value):
        if isinstance(value, datetime | date):
            return value.isoformat()
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        return [plain(v) for v in value] if isinstance(value, list) else value

    return plain(yaml.safe_load(text))


def test_committed_schema_is_the_command_output():
    done = subprocess.run([sys.executable, "-m", "monitor", "schema"], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout == SCHEMA_FILE.read_text(), "regenerate: firsttoken schema > docs/firsttoken.schema.json"


def test_schema_is_valid_draft_2020_12():
    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["additionalProperties"] is False and "providers" in schema["properties"]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_points_at_the_schema_and_passes_it(path):
    text = path.read_text()
    assert text.splitlines()[0] == COMMENT
    for beside in (path.parent, REPO):  # where it is, and where the README copies it to
        assert (beside / "firsttoken.schema.json").read_text() == SCHEMA_FILE.read_text()
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text()))
    assert [e.message for e in validator.iter_errors(_as_editor_reads_it(text))] == []


def test_design_example_passes_and_a_typo_is_flagged():
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text()))
    tree = _as_editor_reads_it(DESIGN_EXAMPLE)
    assert list(validator.iter_errors(tree)) == []
    tree["providers"]["openai"]["modles"] = tree["providers"]["openai"].pop("models")
    tree["notifiers"][0]["type"] = "webhok"
    tree["defaults"]["max_concurrency"] = "${MAX_CONCURRENCY}"  # a number from the environment is fine
    found = {(tuple(e.absolute_path), e.message.split(" (")[0][-40:]) for e in validator.iter_errors(tree)}
    assert (("providers", "openai"), "Additional properties are not allowed") in found
    assert {path for path, _ in found} == {("providers", "openai"), ("notifiers", 0), ("notifiers", 0, "type")}


def test_protocols_and_notifier_types_are_enums_of_the_discovered_ones():
    """An editor flags `protocol: opeani-chat` and `type: webhok`, and offers the names that load."""
    from monitor.config.notifiers import notifier_types
    from monitor.protocols import protocol_names

    schema = json.loads(SCHEMA_FILE.read_text())
    assert schema["$defs"]["Provider"]["properties"]["protocol"]["enum"] == protocol_names()
    assert schema["properties"]["notifiers"]["items"]["properties"]["type"]["enum"] == list(notifier_types())
    validator = jsonschema.Draft202012Validator(schema)
    tree = _as_editor_reads_it(DESIGN_EXAMPLE)
    tree["providers"]["openai"]["protocol"] = "opeani-chat"
    tree["notifiers"][0]["type"] = "webhok"
    flagged = {tuple(e.absolute_path): e.message for e in validator.iter_errors(tree)}
    assert "is not one of ['anthropic'" in flagged[("providers", "openai", "protocol")]
    assert "'webhook'" in flagged[("notifiers", 0, "type")]
