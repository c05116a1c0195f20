"""The config file `firsttoken demo` writes: the cast as providers, alert rules, a log notifier.

It is an ordinary firsttoken config, commented, so a new user can read it as
a first example (and `firsttoken run --config` it while the simulator runs).
Text is built here, values quoted as JSON (valid YAML), so odd paths cannot
break it. Real providers are added only for keys present in the environment,
and only as `${VAR}` references: the key itself never lands in the file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from monitor.demo.cast import GATEWAY_PIN, LONG_PROMPT_TOKENS, PROVIDERS, SHORT_PROMPT
from monitor.demo.vantage import FAR_AGENT, FAR_PROMPT, FAR_PROVIDERS, FAR_REGION
from monitor.simulator.wire import base_path

LONG_PROMPT_FILE = "prompts/rag-4k.txt"
# Cache probes (DESIGN §13): one automatic cache (OpenAI's) and one marked (Anthropic's); the
# ~4,000-token passages are over both models' minimum (Haiku 4.5 caches from 4,096 only).
CACHE_PROVIDERS = ("sim-openai", "sim-anthropic")
CACHE_MODELS = ("gpt-4o-mini", "claude-sonnet-4-5")
DEMO_AGENT = "demo"
SIM_API_KEY = "sk-demo-not-a-real-key"
# Both vantage points read this one file (DESIGN §11): demo-far is given its own, longer path to the
# regions it probes through this variable (monitor/demo/far_agent.py); unset, the URL is the direct one.
FAR_PATH_ENV = "DEMO_FAR_URL"


@dataclass(frozen=True, slots=True)
class RealProvider:
    name: str
    protocol: str
    base_url: str
    model: str  # small and cheap: the demo probes it every `REAL_INTERVAL`
    env_vars: tuple[str, ...]  # the first one set wins


REAL_PROVIDERS = (
    RealProvider("openai", "openai-chat", "https://api.openai.com/v1", "gpt-4o-mini", ("OPENAI_API_KEY",)),
    RealProvider("anthropic", "anthropic", "https://api.anthropic.com", "claude-haiku-4-5", ("ANTHROPIC_API_KEY",)),
    RealProvider(
        "gemini",
        "gemini",
        "https://generativelanguage.googleapis.com",
        "gemini-2.5-flash-lite",
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    ),
)
REAL_INTERVAL = "10m"  # 144 short probes a day per provider: cents, not dollars
# The alert rounds, live and in the backfilled history alike (monitor/demo/runner.py). A round costs
# the backfill ~10 ms in one process: a day's history took 11.8 s judged every 15 min, 15.4 s every
# 2 min, 20.8 s every minute, 34.8 s every 30 s (2 cores, issue 32). Live alerts wait 2 min at most.
EVALUATE_EVERY = "2m"

# Prices (USD per million tokens) so the compare page can show cost per probe.
PRICES = {
    "sim-openai/gpt-4o-mini": (0.15, 0.60),
    "sim-openai/gpt-4o": (2.50, 10.00),
    "sim-anthropic/claude-haiku-4-5": (1.00, 5.00),
    "sim-anthropic/claude-sonnet-4-5": (3.00, 15.00),
    "sim-gemini/gemini-2.5-flash": (0.30, 2.50),
    "sim-gemini/gemini-2.5-pro": (1.25, 10.00),
    "sim-router/llama-3.1-70b": (0.59, 0.79),
}


def real_providers_in(env: Mapping[str, str]) -> list[tuple[RealProvider, str]]:
    """(provider, name of the variable holding its key) for each key present."""
    found = []
    for provider in REAL_PROVIDERS:
        var = next((v for v in provider.env_vars if env.get(v)), None)
        if var is not None:
            found.append((provider, var))
    return found


def sqlite_url(path: Path) -> str:
    """An absolute SQLite URL; odd characters (spaces, `#`) percent-encoded, which SQLAlchemy decodes."""
    return "sqlite:///" + quote(str(path.resolve()))


def _q(value: object) -> str:
    return json.dumps(value)


def _region_line(provider: str, region: str, simulator_url: str, base: str) -> str:
    if provider in FAR_PROVIDERS and region == FAR_REGION:
        url = f"${{{FAR_PATH_ENV}:-{simulator_url}}}/region/{region}{base}"
        return f"      {region}: {_q(url)}   # {FAR_AGENT} sets {FAR_PATH_ENV}: its own, longer path"
    return f"      {region}: {_q(f'{simulator_url}/region/{region}{base}')}"


def _checks(real: list[tuple[RealProvider, str]] | None) -> list[str]:
    """Every target from `demo`; the far vantage point's few from `demo-far` too (a target comes from one check)."""
    names = [p.name for p in PROVIDERS]
    others = [n for n in names if n not in FAR_PROVIDERS]
    far_other_regions = sorted({r for p in PROVIDERS if p.name in FAR_PROVIDERS for r in p.regions} - {FAR_REGION})
    only_demo = f"    agents: [{DEMO_AGENT}]"
    lines = [
        "checks:",
        f"  - providers: [{', '.join(FAR_PROVIDERS)}]   # probed from two vantage points",
        f"    regions: [{FAR_REGION}]",
        f"    prompts: [{FAR_PROMPT}]",
        f"    agents: [{DEMO_AGENT}, {FAR_AGENT}]",
        f"  - providers: [{', '.join(FAR_PROVIDERS)}]",
        f"    regions: [{', '.join(far_other_regions)}]",
        f"    prompts: [{FAR_PROMPT}]",
        only_demo,
        f"  - providers: [{', '.join(others)}]",
        f"    prompts: [{FAR_PROMPT}]",
        only_demo,
        f"  - providers: [{', '.join(names)}]",
        "    prompts: [rag-4k]",
        only_demo,
        f"  - providers: [{', '.join(CACHE_PROVIDERS)}]",
        f"    models: [{', '.join(CACHE_MODELS)}]   # models whose caching minimum the passages pass",
        "    prompts: [rag-cached]",
        only_demo,
    ]
    if real:
        lines += [
            f"  - providers: [{', '.join(p.name for p, _ in real)}]",
            "    prompts: [short]              # the long prompt costs real money",
            f"    interval: {REAL_INTERVAL}",
            only_demo,
        ]
    return lines


def config_text(
    *,
    simulator_url: str,
    database_url: str,
    interval: str = "30s",
    dashboard_url: str | None = None,
    real: list[tuple[RealProvider, str]] | None = None,
) -> str:
    """The demo config; `simulator_url` is the simulator's root (`http://127.0.0.1:PORT`)."""
    lines = [
        "# Written by `firsttoken demo`: three simulated providers speaking their real wire",
        "# protocols, two models and two regions each, a short and a long prompt.",
        "# It is rewritten on every start (the simulator's port changes); copy it to start your own.",
        f"# Two vantage points read it: {DEMO_AGENT} (the demo itself) and {FAR_AGENT}, a second `firsttoken run`",
        f"# with FIRSTTOKEN_AGENT={FAR_AGENT}, further away (see `agents:` under checks).",
        f"database: {_q(database_url)}",
        f"agent: {DEMO_AGENT}",
        "",
        "defaults:",
        f"  interval: {interval}           # live probing; the backfilled history is spaced wider",
        "  timeout: 30s",
        "  ttft_timeout: 20s",
        "",
        "prompts:",
        "  short:",
        f"    messages: [{{role: user, content: {_q(SHORT_PROMPT)}}}]",
        "    max_tokens: 64",
        f"  rag-4k:                 # ~{LONG_PROMPT_TOKENS} tokens of passages: prefill makes TTFT grow",
        f"    file: {LONG_PROMPT_FILE}",
        "    max_tokens: 96",
        "  rag-cached:              # the same passages as a cache probe: a cold and a warm request a round",
        f"    file: {LONG_PROMPT_FILE}",
        "    max_tokens: 96",
        "    cache: true",
        "",
        "providers:",
    ]
    for p in PROVIDERS:
        base = base_path(p.protocol)
        lines += [
            f"  {p.name}:",
            f"    protocol: {p.protocol}",
            f"    api_key: {_q(SIM_API_KEY)}",
            "    regions:",
            *(_region_line(p.name, region, simulator_url, base) for region in p.regions),
            f"    models: [{', '.join(p.models)}]",
        ]
        if p.name == "sim-router":  # a gateway: pin the route; a response from another upstream is a fallback
            lines += [f"    params: {{provider: {{order: [{GATEWAY_PIN}]}}}}   # OpenRouter provider routing"]
    for provider, var in real or []:
        lines += [
            f"  {provider.name}:                # real: {var} is set",
            f"    protocol: {provider.protocol}",
            f"    api_key: ${{{var}}}",
            "    regions:",
            f"      global: {_q(provider.base_url)}",
            f"    models: [{provider.model}]",
        ]
    lines += ["", *_checks(real)]
    lines += [
        "",
        "alerting:                          # the leader's rounds; the backfilled history was judged as often",
        f"  evaluate_every: {EVALUATE_EVERY}",
        "  deliver_every: 2s",
        "",
        "alerts:",
        "  - name: ttft-regression          # a sustained shift against the series' own baseline",
        "    metric: ttft_ms",
        "    kind: regression",
        "    min_change: 50%",
        "    severity: page",
        "  - name: error-rate",
        "    metric: error_rate",
        "    kind: threshold",
        "    above: 20%",
        "    window: 30m                    # holds 6 samples even at the history's 5-minute spacing",
        "    severity: page",
        "  - name: route-changed            # the upstream a gateway names moved, and stayed moved",
        "    metric: served_by",
        "    kind: change",
        "    severity: ticket",
        "  - name: build-changed            # a new model build (system_fingerprint) is answering",
        "    metric: system_fingerprint",
        "    kind: change",
        "    severity: ticket",
        "  - name: cache-hit-ratio          # a prompt cache that stopped hitting (cache probes' warm half)",
        "    metric: cache_hit_ratio",
        "    kind: threshold",
        "    below: 50%",
        "    window: 30m",
        "    min_samples: 4",
        "    severity: ticket",
        "  - name: ttft-p90-slo",
        "    metric: ttft_ms",
        "    kind: threshold",
        "    percentile: 90",
        "    above: 8s",
        "    window: 30m",
        "    severity: ticket",
        "",
        "slos:                               # error budgets: the SLOs page and burn-rate alerts",
        "  - name: answers-fast",
        "    objective: 99%                  # of probes over the period answer, first token under 10 s",
        "    good: {ttft_ms: {below: 10s}}",
        "    period: 7d",
        "    per: provider",
        "",
        "notifiers:",
        "  - name: console                  # prints each firing and resolved alert",
        "    type: log",
        "",
        "prices:                            # USD per million tokens (input, output)",
        *(f"  {key}: {{input: {i}, output: {o}}}" for key, (i, o) in PRICES.items()),
    ]
    if dashboard_url:
        lines += ["", f"dashboard_url: {_q(dashboard_url)}"]
    return "\n".join(lines) + "\n"
