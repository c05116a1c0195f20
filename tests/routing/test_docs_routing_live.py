"""docs/routing-live.md's snippets are real: its firsttoken config loads, its LiteLLM proxy config
passes the callback's own checks, its MCP client configs are JSON naming `firsttoken mcp`, and its
offline commands run."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

from monitor.config import load_config_text
from monitor.integrations.litellm_settings import settings_from

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "routing-live.md").read_text()


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}[^\n]*\n(.*?)```", DOC, flags=re.S)


def test_the_firsttoken_config_loads():
    (config,) = [b for b in blocks("yaml") if "providers:" in b]
    env = {"GROQ_API_KEY": "k1", "TOGETHER_API_KEY": "k2", "PD_ROUTING_KEY": "rk"}
    loaded = load_config_text(config, env=env)
    assert {t.canonical_model for t in loaded.targets} == {"llama-3.1-70b"} and len(loaded.targets) == 2


def test_the_litellm_config_names_the_handler_and_valid_settings():
    (proxy,) = [yaml.safe_load(b) for b in blocks("yaml") if "litellm_settings" in b]
    assert proxy["litellm_settings"]["callbacks"] == ["monitor.integrations.litellm.handler"]
    feed, prompt, slack = settings_from(proxy["callback_settings"]["firsttoken"], environ={})
    assert (feed.refresh_s, feed.window, prompt, slack) == (15.0, "1m", None, 0.2)
    assert {m["model_name"] for m in proxy["model_list"]} == {"llama-3.1-70b"}
    source = (ROOT / "monitor" / "integrations" / "litellm.py").read_text()
    assert "\nhandler = FirsttokenRouting()\n" in source  # the module-level instance the config names


def test_the_mcp_client_configs_start_firsttoken_mcp_or_reach_slash_mcp():
    configs = [json.loads(b) for b in blocks("json")]
    servers = [c.get("mcpServers", c.get("servers"))["firsttoken"] for c in configs]
    stdio = [s for s in servers if "command" in s]
    assert stdio and all(s["command"] == "firsttoken" and s["args"][0] == "mcp" for s in stdio)
    http = [s for s in servers if "url" in s]
    assert http and all(s["url"].endswith("/mcp") and s["headers"]["Authorization"].startswith("Bearer ") for s in http)


def test_the_offline_commands_run():
    for argv in (["mcp", "--help"], ["routes", "--help"]):
        done = subprocess.run([sys.executable, "-m", "monitor", *argv], cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    assert "--watch" in done.stdout
