"""Every config in examples/ loads under `firsttoken check-config`, with dummy values for its `${VAR}`s."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}")


def dummy_env(text: str) -> dict[str, str]:
    """A value for each variable the file needs (those with a default are left unset: the default must load)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTTOKEN_") and not k.endswith("_API_KEY")}
    for name, default in VARIABLE.findall(text):
        if default:
            continue
        if name.endswith("_APPRISE_URL"):
            env[name] = "slack://T000/B000/dummydummydummy"
        else:
            env[name] = f"dummy-{name.lower()}"
    return env


@pytest.mark.parametrize(
    "name", ["openai-anthropic-gemini.yaml", "bedrock-regions.yaml", "self-hosted.yaml", "small-vs-flagship.yaml"]
)
def test_example_passes_check_config(name):
    path = EXAMPLES / name
    env = dummy_env(path.read_text())
    result = subprocess.run(
        [sys.executable, "-m", "monitor", "check-config", "--config", str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "dummy-" not in result.stdout  # keys are secrets: check-config never prints them
    assert result.stdout.count("\n") > 3


def test_every_example_is_tested():
    assert {p.name for p in EXAMPLES.glob("*.yaml")} == {
        "openai-anthropic-gemini.yaml",
        "bedrock-regions.yaml",
        "self-hosted.yaml",
        "small-vs-flagship.yaml",
    }
