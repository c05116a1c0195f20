"""The Probe kinds page's snippets are real config: together they make one file that loads."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from monitor.config import load_config_text

PAGE = Path(__file__).resolve().parents[1] / "docs" / "probe-kinds.md"


def test_probe_kind_snippets_load(tmp_path) -> None:
    prompts, extra = {}, {}
    for block in re.findall(r"```yaml\n(.*?)```", PAGE.read_text(), re.S):
        tree = yaml.safe_load(block)
        prompts.update(tree.get("prompts", {}))
        extra.update({k: tree[k] for k in ("prices", "budget", "alerts") if k in tree})
    assert len(prompts) == 6  # one per probe kind with a prompt
    provider = {"protocol": "openai-chat", "regions": {"global": "http://127.0.0.1:1"}, "models": ["gpt-4o-mini"]}
    config = {"providers": {"openai": provider}, "prompts": prompts, **extra}
    config["checks"] = [{"providers": ["openai"], "prompts": sorted(prompts)}]
    loaded = load_config_text(json.dumps(config), base_dir=tmp_path, env={})
    assert len(loaded.targets) == 6 and loaded.budget is not None
    assert loaded.prompts["weather-tool"].expect.tool.name == "get_weather"
