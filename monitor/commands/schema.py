"""`firsttoken schema`: print the JSON Schema of firsttoken.yaml (for editors and CI).

    firsttoken schema > firsttoken.schema.json
    # then, first line of firsttoken.yaml:
    # yaml-language-server: $schema=./firsttoken.schema.json

The repository ships the same text as docs/firsttoken.schema.json (a test keeps them equal).
"""

from __future__ import annotations

import argparse
import sys


def add_arguments(p: argparse.ArgumentParser) -> None:
    """schema takes no arguments (the common --config is ignored: the schema is the same for every file)."""


def run(args: argparse.Namespace) -> int:
    from monitor.config.editor import json_schema_text

    sys.stdout.write(json_schema_text())
    return 0
