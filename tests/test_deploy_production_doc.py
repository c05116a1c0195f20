"""docs/deploy-production.md: every YAML snippet loads as config, its URLs parse, its command runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from monitor.config import load_config_text
from monitor.storage.db import normalize_url
from monitor.storage.pooler import prepare_policy
from tests.docs_blocks import fenced

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "deploy-production.md"
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def blocks(language: str) -> list[str]:
    return fenced(DOC.read_text(), language)


@pytest.mark.parametrize("snippet", blocks("yaml"), ids=lambda s: s.splitlines()[0][:40])
def test_every_yaml_snippet_loads_as_config(snippet, tmp_path):
    env = {name: f"dummy-{name.lower()}-value" for name in VARIABLE.findall(snippet)}
    config = load_config_text(snippet, base_dir=tmp_path, env=env)
    assert config.targets
    if "database:" in snippet:
        url, policy = prepare_policy(normalize_url(config.database_url))
        assert policy is None and "prepare_threshold" not in url.query
    for target in config.targets:
        if target.proxy not in (None, "direct"):
            assert env["PROXY_PASSWORD"] in config.secrets  # the proxy's password is masked like a key


def test_the_failover_url_parses_with_both_hosts():
    (text,) = blocks("text")
    url = normalize_url(text.strip())
    assert url.query["host"] == ("pg-a.internal:5432", "pg-b.internal:5432")
    assert url.query["target_session_attrs"] == "read-write"


def test_the_benchmark_command_runs():
    (command,) = re.findall(r"^    \.venv/bin/python (-m benchmarks\.metrics_size .*)$", DOC.read_text(), re.M)
    argv = command.split()
    result = subprocess.run(
        [sys.executable, *argv[:2], "--targets", "400", "--rounds", "1"], cwd=ROOT, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "before" in result.stdout and "after" in result.stdout
    assert "--targets" in argv
