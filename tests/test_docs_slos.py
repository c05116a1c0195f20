"""docs/slos.md is real: every YAML snippet loads as config, and every offline command it shows runs
and prints what the page says it prints."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from monitor.config import load_config_text

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "slos.md"
EXAMPLE = ROOT / "docs" / "slos"
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)
ENV = {"OPENAI_API_KEY": "sk-docs-dummy", "PD_ROUTING_KEY": "docs-dummy-routing"}
NEEDS_DATABASE = ("firsttoken slo\n",)  # reads a database of probes: not an offline command


def blocks(kind: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(PAGE.read_text()) if lang == kind]


def test_every_yaml_snippet_loads_as_config():
    base = yaml.safe_load((EXAMPLE / "firsttoken.yaml").read_text())
    snippets = blocks("yaml")
    assert len(snippets) >= 2
    for snippet in snippets:
        merged = {**base, **yaml.safe_load(snippet)}
        config = load_config_text(yaml.safe_dump(merged), base_dir=EXAMPLE, env=ENV)
        assert config.slos


def commands() -> list[tuple[str, list[str]]]:
    """(command line, the output lines shown under it) of every console block."""
    out = []
    for body in blocks("console"):
        lines = body.splitlines()
        command = lines[0].removeprefix("$ ")
        if command + "\n" in NEEDS_DATABASE:
            continue  # tests/slo/test_slo_command.py runs it on a database it seeds
        out.append((command, [line for line in lines[1:] if line and line != "..."]))
    return out


@pytest.mark.parametrize(("command", "shown"), commands(), ids=[c for c, _ in commands()])
def test_every_offline_command_runs_and_prints_what_the_page_shows(command, shown, tmp_path):
    for name in ("firsttoken.yaml", "history.csv"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    bindir = Path(sys.executable).parent
    assert shutil.which("promtool") or "promtool" not in command, "promtool is not installed: make integration-deps"
    env = {**os.environ, **ENV, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    env.pop("FIRSTTOKEN_DATABASE_URL", None)
    done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    printed = done.stdout.replace(str(tmp_path) + "/", "")
    for line in shown:
        assert line.rstrip() in printed, (line, printed)
