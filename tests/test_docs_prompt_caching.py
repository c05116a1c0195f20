"""docs/prompt-caching.md is real: its configs load, check-config prints its warning, and its
worked example's `probe --json` gives both halves of each round against the simulator."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from monitor.commands.check_config import check_config_command
from monitor.config import load_config_text
from tests.docs_blocks import fenced

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "prompt-caching.md"


def yaml_blocks() -> list[str]:
    return fenced(DOC.read_text(), "yaml")


def test_every_yaml_snippet_loads_as_config(tmp_path):
    blocks = yaml_blocks()
    assert len(blocks) == 2
    example = load_config_text(blocks[0], base_dir=tmp_path, env={})
    assert all(t.prompt_spec.cache for t in example.targets) and len(example.targets) == 2
    rules = {r.name: r for r in example.alerts}
    assert rules["cache-hit-ratio"].below == 0.5 and rules["warm-ttft-regression"].cache_state == "warm"
    (price,) = example.prices.values()
    assert (price.cached_input, price.cache_write) == (0.30, 3.75)
    short = load_config_text(blocks[1], base_dir=tmp_path, env={})
    assert short.prompts["faq"].cache


def test_check_config_prints_the_documented_warning(tmp_path):
    config = tmp_path / "firsttoken.yaml"
    config.write_text(yaml_blocks()[1])
    out, err = io.StringIO(), io.StringIO()
    assert check_config_command(str(config), out, err, {}) == 0, err.getvalue()
    warning = next(line for line in out.getvalue().splitlines() if line.startswith("warning:"))
    assert warning in DOC.read_text()
    # A prompt long enough for every protocol: no warning.
    (tmp_path / "ok.yaml").write_text(yaml_blocks()[0])
    out = io.StringIO()
    assert check_config_command(str(tmp_path / "ok.yaml"), out, io.StringIO(), {}) == 0
    assert "warning:" not in out.getvalue()


def test_the_worked_example_runs(simulator, tmp_path):
    config = tmp_path / "firsttoken.yaml"
    config.write_text(yaml_blocks()[0].replace("http://127.0.0.1:8400", simulator.base_url))
    done = subprocess.run(
        [sys.executable, "-m", "monitor", "probe", "--config", str(config), "--json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    samples = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted((s["provider"], s["cache_state"]) for s in samples) == [
        ("sim-anthropic", "cold"), ("sim-anthropic", "warm"), ("sim-openai", "cold"), ("sim-openai", "warm"),
    ]  # fmt: skip
    by = {(s["provider"], s["cache_state"]): s for s in samples}
    assert by[("sim-anthropic", "cold")]["cache_write_tokens"] > 1400
    assert by[("sim-anthropic", "warm")]["cache_read_tokens"] > 1400 and by[("sim-anthropic", "warm")]["cache_hit"]
    assert by[("sim-openai", "warm")]["cache_read_tokens"] > 1300
    for provider in ("sim-anthropic", "sim-openai"):
        assert by[(provider, "cold")]["ttft_ms"] - by[(provider, "warm")]["ttft_ms"] > 250
    assert by[("sim-anthropic", "warm")]["cost_usd"] < by[("sim-anthropic", "cold")]["cost_usd"]
