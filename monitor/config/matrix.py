"""`checks:` against the providers and prompts they name, and their expansion into the target matrix.

Each check expands to providers × models × regions × prompts. A target may
come from one check only: two checks producing the same target is an error
rather than "the later wins", because the two usually disagree on interval or
agents and a silent winner would probe something the user did not ask for.
A check naming a provider or prompt that failed to load is not a second
error: that entry's own errors say what is wrong, and it expands to nothing.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from monitor.config.errors import did_you_mean, path_of, problem
from monitor.config.fields import LoadContext
from monitor.config.prompts import Prompt
from monitor.config.schema import Check, Defaults, FileSpec, Provider, registered_protocols, timeout_message
from monitor.config.values import Target
from monitor.protocols.base import get_protocol
from monitor.sample import TargetKey

MAX_TARGETS = 200_000  # 20x the sizing of DESIGN §9; more is a typo'd product, not a plan


def declared(section: Any) -> set[str]:
    """Names a section of the file declares, valid or not."""
    return {k for k in section if isinstance(k, str)} if isinstance(section, Mapping) else set()


def unknown_names(
    ctx: LoadContext, loc: tuple, names: Iterable[str], known: Iterable[str], what: str, where: str = ""
) -> None:
    known = sorted(known)
    for j, name in enumerate(names):
        if name not in known:
            ctx.errors.append(problem((*loc, j), f"unknown {what} {{got}}{where}{did_you_mean(name, known)}", name))


def build_targets(spec: FileSpec, tree: Mapping[str, Any], ctx: LoadContext) -> tuple[Target, ...]:
    checks: list[tuple[int, Check]] = []
    for i, check in enumerate(spec.checks):
        if check is None:
            continue
        before = len(ctx.errors)
        unknown_names(ctx, ("checks", i, "providers"), check.providers, declared(tree.get("providers")), "provider")
        unknown_names(ctx, ("checks", i, "prompts"), check.prompts, declared(tree.get("prompts")), "prompt")
        loaded = [spec.providers[n] for n in check.providers if n in spec.providers]
        if len(loaded) == len(check.providers):  # else a filter cannot be judged
            _filter(ctx, i, "models", check.models, loaded, lambda p: p.models)
            _filter(ctx, i, "regions", check.regions, loaded, lambda p: tuple(p.regions))
        if len(ctx.errors) == before:  # a half-understood check would only add confusing follow-on errors
            checks.append((i, check))
    return _expand(ctx, checks, spec.providers, spec.prompts, spec.defaults)


def _filter(
    ctx: LoadContext, i: int, key: str, chosen: tuple[str, ...], loaded: list[Provider], values: Callable
) -> None:
    """Each name must belong to one of the check's providers, and each provider must keep at
    least one (else it was listed for nothing)."""
    if not chosen:
        return
    what = key[:-1]
    owners = ", ".join(p.name for p in loaded)
    where = f" for provider{'s' if len(loaded) > 1 else ''} {owners}" if owners else ""
    available = {v for p in loaded for v in values(p)}
    unknown_names(ctx, ("checks", i, key), chosen, available, what, where)
    if set(chosen) & available:
        for provider in loaded:
            if not set(values(provider)) & set(chosen):
                ctx.errors.append(problem(("checks", i, key), f"provider {provider.name!r} has none of these {key}"))


def _expand(
    ctx: LoadContext,
    checks: list[tuple[int, Check]],
    providers: Mapping[str, Provider],
    prompts: Mapping[str, Prompt],
    defaults: Defaults,
) -> tuple[Target, ...]:
    """The matrix, sorted by target id. Precedence: check > provider > defaults."""
    targets: dict[str, Target] = {}
    owner: dict[str, int] = {}  # target id -> index of the check that produced it
    clashes: dict[tuple[int, int], list[str]] = {}
    for i, check in checks:
        for name in check.providers:
            provider = providers.get(name)
            if provider is None:
                continue
            models = [m for m in provider.models if not check.models or m in check.models]
            regions = [(g, u) for g, u in provider.regions.items() if not check.regions or g in check.regions]
            for model, (region, base_url), prompt_name in itertools.product(models, regions, check.prompts):
                prompt = prompts.get(prompt_name)
                if prompt is None:
                    continue
                key = TargetKey(name, model, region, prompt_name)
                if key.id in owner:
                    clashes.setdefault((i, owner[key.id]), []).append(key.id)
                    continue
                owner[key.id] = i
                if len(owner) > MAX_TARGETS:
                    ctx.errors.append(problem(("checks", i), f"the matrix has more than {MAX_TARGETS:,} targets"))
                    return ()
                target = _target(key, check, provider, prompt, base_url, defaults)
                _check_timeouts(ctx, target, i, check, provider)
                _check_capabilities(ctx, i, provider, prompt)
                targets[key.id] = target
    for (i, first), ids in clashes.items():
        produced = f"{len(ids)} target(s) already produced by {path_of(('checks', first))}"
        ctx.errors.append(
            problem(("checks", i), f"{produced}, e.g. {min(ids)} (a target may come from one check only)")
        )
    return tuple(targets[i] for i in sorted(targets))


def _pick(*values: Any) -> Any:
    return next(v for v in values if v is not None)


def _target(
    key: TargetKey, check: Check, provider: Provider, prompt: Prompt, base_url: str, defaults: Defaults
) -> Target:
    return Target(
        key=key,
        protocol=provider.protocol,
        base_url=base_url,
        prompt_spec=prompt,
        interval_s=_pick(check.interval_s, provider.interval_s, defaults.interval_s),
        timeout_s=_pick(check.timeout_s, provider.timeout_s, defaults.timeout_s),
        ttft_timeout_s=_pick(check.ttft_timeout_s, provider.ttft_timeout_s, defaults.ttft_timeout_s),
        cache_bust=_pick(provider.cache_bust, defaults.cache_bust),
        api_key=provider.api_key,
        headers=provider.headers,
        params=provider.params,
        options=provider.options,
        agents=check.agents,
        canonical_model=provider.canonical.get(key.model, key.model),
        reasoning=prompt.reasoning or provider.reasoning,
        proxy=provider.proxy,
    )


def _check_capabilities(ctx: LoadContext, i: int, provider: Provider, prompt: Prompt) -> None:
    """A prompt may ask for what the provider's wire protocol cannot express:
    the protocol module says what it supports; the error names the provider."""
    if prompt.response_format is None or provider.protocol not in registered_protocols():
        return  # an unknown protocol is reported where the provider is read
    if not get_protocol(provider.protocol).supports_response_format:
        cannot = f"which provider {provider.name!r} (protocol {provider.protocol}) cannot express"
        ctx.errors.append(problem(("checks", i), f"prompt {prompt.name!r} has response_format, {cannot}"))


def _check_timeouts(ctx: LoadContext, target: Target, i: int, check: Check, provider: Provider) -> None:
    if target.ttft_timeout_s <= target.timeout_s:
        return
    # Blame the most specific level that set either value, once (the lines are deduplicated).
    if check.timeout_s is not None or check.ttft_timeout_s is not None:
        origin: tuple = ("checks", i)
    elif provider.timeout_s is not None or provider.ttft_timeout_s is not None:
        origin = ("providers", provider.name)
    else:
        origin = ("defaults",)
    error = problem(origin, timeout_message(target.ttft_timeout_s, target.timeout_s))
    ctx.errors.append({**error, "order": ("checks", i)})
