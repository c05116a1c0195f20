"""What the matrix will cost a month, before it runs. Pure (but for counting tokens).

An upper bound, on purpose: a budget that `refuse`s must not be passed by a
projection that guessed low. Per target, a month (30 days) of probes at its
interval, each probe paying for
- input: the whole prompt, uncached (o200k_base tokens of every message, the
  synthetic filler included; a provider's own tokenizer differs by a few %),
- output: all of `max_tokens`, plus the reasoning budget when the prompt or
  provider sets `reasoning` (thinking tokens are billed as output; an effort
  counts as its budget in monitor.protocols.features.EFFORT_BUDGET_TOKENS).
A target pinned to several `agents:` is probed by each; one open to every agent
is counted once (the projection cannot know how many agents will run).
Targets without a `prices:` entry are listed apart, never counted as free. A cache probe
(`cache: true`) is two requests a round, both counted uncached.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass

from monitor.probe.synthetic import synthetic_messages
from monitor.probe.tokens import count_o200k
from monitor.protocols.features import ReasoningSetting, reasoning_budget

MONTH_S = 30 * 86_400.0
NONCE_TOKENS = 8  # "[1a2b3c4d] ": at most this many tokens


@dataclass(frozen=True, slots=True)
class Projection:
    per_provider_usd: dict[str, float]
    targets_per_provider: dict[str, int]
    unpriced: tuple[str, ...]  # target ids without a price

    @property
    def total_usd(self) -> float:
        return sum(self.per_provider_usd.values())


def project_monthly(config) -> Projection:
    usd: dict[str, float] = defaultdict(float)
    counted: dict[str, int] = defaultdict(int)
    unpriced = []
    for target in config.targets:
        price = config.price(target.provider, target.model)
        if price is None:
            unpriced.append(target.id)
            continue
        probes = MONTH_S / target.interval_s * max(1, len(target.agents))
        if target.prompt_spec.cache:  # a cache probe sends a cold and a warm request each round
            probes *= 2
        prompt = target.prompt_spec
        tokens_in = prompt_tokens(prompt) + (NONCE_TOKENS if target.cache_bust else 0)
        tokens_out = prompt.max_tokens + _reasoning_tokens(target.reasoning)
        usd[target.provider] += probes * price.cost_usd(tokens_in, tokens_out)
        counted[target.provider] += 1
    return Projection(dict(usd), dict(counted), tuple(unpriced))


def prompt_tokens(prompt) -> int:
    return _prompt_tokens(prompt.messages, None if prompt.synthetic is None else prompt.synthetic)


@functools.lru_cache(maxsize=256)
def _prompt_tokens(messages, synthetic) -> int:
    if synthetic is not None:
        messages = synthetic_messages(messages, synthetic.tokens, synthetic.seed)
    return sum(count_o200k(m.content) for m in messages)


def _reasoning_tokens(reasoning) -> int:
    if reasoning is None:
        return 0
    return reasoning_budget(ReasoningSetting(reasoning.effort, reasoning.budget_tokens))


def over_budget(config) -> tuple[str, bool] | None:
    """(one line, refuse?) when a config's projected monthly cost exceeds its `budget:`, else None.
    What `firsttoken run` checks as it starts and again on each config reload."""
    if config.budget is None:
        return None
    verdict = budget_verdict(project_monthly(config), config.budget)
    return None if verdict is None else (verdict, config.budget.action == "refuse")


def budget_verdict(projection: Projection, budget) -> str | None:
    """One line when the projection exceeds the budget, else None."""
    if budget is None or projection.total_usd <= budget.monthly_usd:
        return None
    return (
        f"projected monthly cost ${projection.total_usd:,.2f} (upper bound) exceeds "
        f"budget.monthly_usd ${budget.monthly_usd:,.2f}"
    )


def report_lines(projection: Projection, budget=None) -> list[str]:
    lines = ["projected monthly cost (upper bound: whole prompt uncached, max_tokens generated, 30 days):"]
    width = max((len(p) for p in projection.per_provider_usd), default=5)
    for provider in sorted(projection.per_provider_usd):
        n = projection.targets_per_provider[provider]
        lines.append(f"  {provider.ljust(width)}  ${projection.per_provider_usd[provider]:>12,.2f}  ({n} targets)")
    lines.append(f"  {'total'.ljust(width)}  ${projection.total_usd:>12,.2f}")
    if projection.unpriced:
        shown = ", ".join(projection.unpriced[:3]) + (" …" if len(projection.unpriced) > 3 else "")
        lines.append(f"  not priced (no prices: entry), not counted: {len(projection.unpriced)} targets, e.g. {shown}")
    if budget is not None:
        verdict = budget_verdict(projection, budget)
        state = f"over: {budget.action}" if verdict else "within"
        lines.append(f"budget: ${budget.monthly_usd:,.2f}/month, action {budget.action}: projection {state}")
    return lines
