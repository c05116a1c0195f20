"""How long a prompt must be before a provider caches it (DESIGN §13). Pure.

Below its minimum a provider caches nothing, so a cache probe's warm half would measure a
cold request and its hit ratio would read 0 for a cache that works. `check-config` warns.
Figures from the providers' prompt-caching documentation (2025-2026):
- OpenAI (Chat Completions, Responses, Azure OpenAI): 1,024 tokens, then 128-token steps.
- Anthropic, and Claude on Bedrock: 1,024 for Sonnet and Opus 4/4.1; 2,048 for the Haiku 3
  models; 4,096 for Opus 4.5 and Haiku 4.5 (and newer Haiku/Opus, until they say otherwise).
- Gemini implicit caching: 1,024 for Flash models, 4,096 for Pro.
- Bedrock's other models (Nova): 1,000 per cache checkpoint.
- Ollama, vLLM, llama.cpp: no minimum (None), so nothing to warn about; an openai-chat target
  is held to OpenAI's rule, the strictest of the hosts that protocol reaches.
"""

from __future__ import annotations

import re

_CLAUDE_4096 = re.compile(r"(opus-4-5|opus-4\.5|haiku-4|opus-[5-9]|haiku-[5-9])")
_CLAUDE_2048 = re.compile(r"(3-haiku|3-5-haiku|3\.5-haiku|haiku-3)")


def min_cache_tokens(protocol: str, model: str) -> int | None:
    """The fewest prompt tokens the provider caches, or None when it has no minimum."""
    name = model.lower()
    if protocol in ("openai-chat", "openai-responses", "azure-openai"):
        return 1024
    if protocol == "anthropic" or (protocol == "bedrock-converse" and ("claude" in name or "anthropic" in name)):
        if _CLAUDE_4096.search(name):
            return 4096
        if _CLAUDE_2048.search(name):
            return 2048
        return 1024
    if protocol == "bedrock-converse":
        return 1000
    if protocol == "gemini":
        return 4096 if "pro" in name else 1024
    return None


def short_cache_prompts(config) -> list[str]:
    """One line per cache-probe target whose prompt is shorter than its provider caches."""
    from monitor.probe.cost import prompt_tokens

    out = []
    counted: dict[str, int] = {}
    for target in config.targets:
        prompt = target.prompt_spec
        if not prompt.cache:
            continue
        need = min_cache_tokens(target.protocol, target.model)
        if need is None:
            continue
        if target.prompt not in counted:
            counted[target.prompt] = prompt_tokens(prompt)
        have = counted[target.prompt]
        if have < need:
            out.append(
                f"warning: prompts.{target.prompt}: cache: true but ~{have:,} tokens, below the {need:,} "
                f"that {target.provider}/{target.model} ({target.protocol}) caches: {target.id}'s warm probes cannot hit"
            )
    return out
