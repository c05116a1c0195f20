"""MkDocs hooks (mkdocs.yml `hooks:`): the generated reference pages join the site at build time.

The configuration reference comes from the JSON Schema and the command-line reference from the
argument parser of the code being built (monitor/reference/), and the environment-variable page from
the registry in monitor/envvars.py, so a new key, flag or variable is documented by the next
`make docs-build` and never drifts from the code.
"""

from __future__ import annotations

from mkdocs.structure.files import File

from monitor.cli import build_parser
from monitor.config.editor import json_schema
from monitor.reference import cli_page, config_page, env_page

GENERATED = {
    "reference/configuration.md": lambda: config_page.page(json_schema()),
    "reference/command-line.md": lambda: cli_page.page(build_parser()),
    "environment.md": env_page.page,
}


def on_files(files, config):
    for src_uri, render in GENERATED.items():
        files.append(File.generated(config, src_uri, content=render()))
    return files
