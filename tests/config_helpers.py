"""Shared fixtures for the config tests: the DESIGN §3 example and a small valid config."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from monitor.config import ConfigError, load_config_text

# DESIGN.md §3, byte for byte (test_design_example_is_current checks it still is).
DESIGN_EXAMPLE = """\
database: sqlite:///firsttoken.db   # FIRSTTOKEN_DATABASE_URL overrides; postgresql+psycopg://… in production
agent: local                        # this probe agent's vantage point; FIRSTTOKEN_AGENT overrides

defaults:
  interval: 5m
  timeout: 60s          # whole probe
  ttft_timeout: 30s     # no first token by then: error_kind timeout

prompts:
  short:
    messages:
      - {role: user, content: "Explain TTFT in one sentence."}
    max_tokens: 64
  rag-4k:
    file: prompts/rag-4k.txt        # relative to this file
    max_tokens: 128

providers:
  openai:
    protocol: openai-chat
    api_key: ${OPENAI_API_KEY}
    regions:
      global: https://api.openai.com/v1
    models: [gpt-4o-mini, gpt-4o]
  anthropic:
    protocol: anthropic
    api_key: ${ANTHROPIC_API_KEY}
    regions:
      global: https://api.anthropic.com
    models: [claude-3-5-haiku-latest]
  openrouter:
    protocol: openai-chat
    api_key: ${OPENROUTER_API_KEY}
    regions:
      global: https://openrouter.ai/api/v1
    models: [meta-llama/llama-3.1-70b-instruct]
    headers: {x-route: '{"provider":"aws","variant":"fp8"}'}   # pin a gateway route (seed article 003)
    params: {provider: {order: [fireworks], allow_fallbacks: false}}   # extra request-body fields
    cache_bust: true                # default; false to measure with the provider's prompt cache
  bedrock:
    protocol: bedrock-converse
    regions:
      us-east-1: https://bedrock-runtime.us-east-1.amazonaws.com
      eu-west-1: https://bedrock-runtime.eu-west-1.amazonaws.com
    models: [anthropic.claude-3-5-haiku-20241022-v1:0]

checks:                 # the matrix: each entry expands to providers × models × regions × prompts
  - providers: [openai, anthropic]
    prompts: [short, rag-4k]
    interval: 2m
  - providers: [bedrock]
    regions: [us-east-1]            # optional filters: models, regions
    prompts: [short]

alerts:
  - name: ttft-regression
    metric: ttft_ms                 # ttft_ms | ttft_answer_ms | tps | total_ms | error_rate
    kind: regression                # sustained shift against the series' own baseline
    min_change: 50%
    severity: page
  - name: ttft-p90-slo
    metric: ttft_ms
    kind: threshold
    percentile: 90
    above: 2000                     # ms
    window: 15m
    severity: ticket
  - name: errors
    metric: error_rate
    kind: threshold
    above: 20%
    window: 15m
    severity: page

notifiers:
  - name: hooks
    type: webhook
    url: http://127.0.0.1:9000/alerts
    secret: ${WEBHOOK_SECRET}       # HMAC-SHA256 of the body in X-Firsttoken-Signature: sha256=<hex>
  - name: oncall
    type: pagerduty                 # Events API v2; dedup_key per alert so resolve closes the incident
    routing_key: ${PD_ROUTING_KEY}
    severities: [page]
  - name: chat
    type: apprise                   # Slack, Teams, Discord, email, Opsgenie… through apprise URLs
    urls: [ "${SLACK_APPRISE_URL}" ]

silences:
  - match: {provider: bedrock, region: eu-west-1}
    until: 2026-12-01T06:00:00Z
    reason: provider maintenance

prices:                             # USD per million tokens, for cost per probe and the compare page
  openai/gpt-4o-mini: {input: 0.15, output: 0.60}
  openai/gpt-4o: {input: 2.50, output: 10.00}

retention:
  raw: 30d
  rollups: 400d
"""

DESIGN_ENV = {
    "OPENAI_API_KEY": "sk-test-openai-0000000001",
    "ANTHROPIC_API_KEY": "anthropic-test-key-0002",
    "OPENROUTER_API_KEY": "openrouter-test-key-0003",
    "WEBHOOK_SECRET": "webhook-hmac-secret-0004",
    "PD_ROUTING_KEY": "pagerduty-routing-0005",
    "SLACK_APPRISE_URL": "slack://TOKENA0006/TOKENB0006/TOKENC0006",
}

RAG_TEXT = "Here is a long document about latency.\n" * 20 + "Summarise it in one line.\n"

# The smallest config that produces a target; tests deep-copy and edit it.
MINIMAL: dict[str, Any] = {
    "prompts": {"short": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 16}},
    "providers": {
        "sim": {
            "protocol": "openai-chat",
            "regions": {"local": "http://127.0.0.1:8400/v1"},
            "models": ["fast"],
        }
    },
    "checks": [{"providers": ["sim"], "prompts": ["short"]}],
}


@pytest.fixture
def design_dir(tmp_path: Path) -> Path:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "rag-4k.txt").write_text(RAG_TEXT)
    (tmp_path / "firsttoken.yaml").write_text(DESIGN_EXAMPLE)
    return tmp_path


def minimal(**changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(MINIMAL)
    data.update(changes)
    return data


def dump(data: dict[str, Any]) -> str:
    return yaml.safe_dump(data, sort_keys=False)


def load(data: dict[str, Any] | str, base_dir: Path | None = None, env: dict[str, str] | None = None):
    text = data if isinstance(data, str) else dump(data)
    return load_config_text(text, base_dir, env or {})


def errors(data: dict[str, Any] | str, base_dir: Path | None = None, env: dict[str, str] | None = None) -> list[str]:
    text = data if isinstance(data, str) else dump(data)
    with pytest.raises(ConfigError) as exc:
        load_config_text(text, base_dir, env or {})
    lines = exc.value.errors
    assert lines, "a ConfigError always carries at least one line"
    for line in lines:
        assert "\n" not in line and "\r" not in line
        assert ": " in line
    return lines


def one_error(data: dict[str, Any] | str, base_dir: Path | None = None, env: dict[str, str] | None = None) -> str:
    lines = errors(data, base_dir, env)
    assert len(lines) == 1, lines
    return lines[0]
