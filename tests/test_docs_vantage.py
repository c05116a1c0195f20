"""docs/vantage-points.md is real: its YAML loads as config, its offline command prints what it shows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from monitor.config import load_config_text
from tests.docs_blocks import fenced

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "vantage-points.md"
BASE = {
    "prompts": {"short": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}},
    "providers": {"p": {"protocol": "openai-chat", "regions": {"r": "http://127.0.0.1:9/v1"}, "models": ["m"]}},
    "checks": [{"providers": ["p"], "prompts": ["short"]}],
}


def blocks(lang: str) -> list[str]:
    return fenced(DOC.read_text(), lang)


def test_every_yaml_snippet_loads_as_config(tmp_path):
    snippets = blocks("yaml")
    assert snippets
    for text in snippets:
        cfg = load_config_text(json.dumps({**BASE, **yaml.safe_load(text)}), base_dir=tmp_path, env={})
        assert cfg.alerts[0].confirm.agents == 2 and cfg.alerts[0].vantage_severity == "ticket"


def test_the_json_body_is_json_with_the_vantage_fields():
    (body,) = blocks("json")
    parsed = json.loads(body)
    assert {"agents", "agents_clear", "attribution"} <= set(parsed) and parsed["scope"]["agent"] == "eu-west"


def test_the_offline_backtest_prints_what_the_page_shows(tmp_path):
    (command,) = [b.strip() for b in blocks("sh") if "backtest" in b]
    (shown,) = blocks("text")
    argv = [sys.executable, "-m", "monitor", *command.split()[1:]]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == shown.split()
