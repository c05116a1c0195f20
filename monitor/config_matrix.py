"""`checks:` and their expansion into the target matrix.

Each check expands to providers × models × regions × prompts. A target may
come from one check only: two checks producing the same target is an error
rather than "the later wins", because the two usually disagree on interval or
agents and a silent winner would probe something the user did not ask for.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from monitor.config_reader import Reader, join
from monitor.config_schema import DAY, HOUR, Check, Defaults, Prompt, Provider, Target
from monitor.protocols.base import get_protocol
from monitor.sample import TargetKey
from monitor.units import format_duration

MAX_TARGETS = 200_000  # 20x the sizing of DESIGN §9; more is a typo'd product, not a plan
CHECK_KEYS = ("providers", "models", "regions", "prompts", "interval", "timeout", "ttft_timeout", "agents")


def build_checks(
    r: Reader, value: Any, providers: Mapping[str, Provider], declared_providers: set[str], declared_prompts: set[str]
) -> list[tuple[str, Check]]:
    """(path, Check) per entry. Names of providers that failed to load are accepted
    here (their own errors are already reported) and simply expand to nothing."""
    checks: list[tuple[str, Check]] = []
    for path, spec in r.items({"checks": value}, "checks", ""):
        s = r.mapping(spec, path, CHECK_KEYS, required=("providers", "prompts"))
        if s is None:
            continue
        before = len(r.errors)
        names = r.refs(s, "providers", path, sorted(declared_providers), "provider", required=True)
        prompts = r.refs(s, "prompts", path, sorted(declared_prompts), "prompt", required=True)
        loaded = [providers[n] for n in names if n in providers]
        complete = len(loaded) == len(names)  # else a filter cannot be judged
        models = _filter(r, s, "models", path, loaded, complete, lambda p: p.models, "model")
        regions = _filter(r, s, "regions", path, loaded, complete, lambda p: tuple(p.regions), "region")
        check = Check(
            providers=names,
            prompts=prompts,
            models=models,
            regions=regions,
            interval_s=r.duration(s, "interval", path, None, max_s=DAY),
            timeout_s=r.duration(s, "timeout", path, None, max_s=HOUR),
            ttft_timeout_s=r.duration(s, "ttft_timeout", path, None, max_s=HOUR),
            agents=r.str_list(s, "agents", path, name=True),
        )
        if len(r.errors) == before:  # a half-understood check would only add confusing follow-on errors
            checks.append((path, check))
    return checks


def _filter(
    r: Reader, s: Mapping[str, Any], key: str, path: str, loaded: list[Provider], complete: bool, values, what: str
) -> tuple[str, ...]:
    """A models/regions filter: each name must belong to one of the check's
    providers, and each provider must keep at least one (else it was listed for nothing)."""
    if s.get(key) is None:
        return ()
    if not complete:
        return r.str_list(s, key, path)
    available = sorted({v for p in loaded for v in values(p)})
    owners = ", ".join(p.name for p in loaded)
    where = f" for provider{'s' if len(loaded) > 1 else ''} {owners}" if owners else ""
    chosen = r.refs(s, key, path, available, what, where=where)
    if chosen:
        for provider in loaded:
            if not set(values(provider)) & set(chosen):
                r.error(join(path, key), f"provider {provider.name!r} has none of these {what}s")
    elif isinstance(s.get(key), list) and not s[key]:
        r.error(join(path, key), "must not be empty (leave it out for every one)")
    return chosen


def expand(
    r: Reader,
    checks: list[tuple[str, Check]],
    providers: Mapping[str, Provider],
    prompts: Mapping[str, Prompt],
    defaults: Defaults,
) -> tuple[Target, ...]:
    """The matrix, sorted by target id. Precedence: check > provider > defaults."""
    targets: dict[str, Target] = {}
    owner: dict[str, str] = {}  # target id -> path of the check that produced it
    clashes: dict[tuple[str, str], list[str]] = {}
    for path, check in checks:
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
                    clashes.setdefault((path, owner[key.id]), []).append(key.id)
                    continue
                owner[key.id] = path
                if len(owner) > MAX_TARGETS:
                    r.error(path, f"the matrix has more than {MAX_TARGETS:,} targets")
                    return ()
                target = _target(key, check, provider, prompt, base_url, defaults)
                _check_timeouts(r, target, path, check, provider)
                check_capabilities(r, path, provider, prompt)
                targets[key.id] = target
    for (path, first), ids in clashes.items():
        r.error(
            path,
            f"{len(ids)} target(s) already produced by {first}, e.g. {min(ids)} (a target may come from one check only)",
        )
    return tuple(targets[i] for i in sorted(targets))


def _pick(*values):
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
    )


def check_capabilities(r: Reader, path: str, provider: Provider, prompt: Prompt) -> None:
    """A prompt may ask for what the provider's wire protocol cannot express (issue 16):
    the protocol module says what it supports; the error names the provider."""
    if prompt.response_format is None:
        return
    try:
        protocol = get_protocol(provider.protocol)
    except KeyError:
        return  # reported where the provider is read
    if not protocol.supports_response_format:
        r.error(
            path,
            f"prompt {prompt.name!r} has response_format, which provider {provider.name!r} "
            f"(protocol {provider.protocol}) cannot express",
        )


def _check_timeouts(r: Reader, target: Target, path: str, check: Check, provider: Provider) -> None:
    if target.ttft_timeout_s <= target.timeout_s:
        return
    # Blame the most specific level that set either value, once (Reader dedupes lines).
    if check.timeout_s is not None or check.ttft_timeout_s is not None:
        origin = path
    elif provider.timeout_s is not None or provider.ttft_timeout_s is not None:
        origin = join("providers", provider.name)
    else:
        origin = "defaults"
    r.error(origin, timeout_message(target.ttft_timeout_s, target.timeout_s))


def timeout_message(ttft_timeout_s: float, timeout_s: float) -> str:
    return (
        f"ttft_timeout ({format_duration(ttft_timeout_s)}) must not be longer than "
        f"timeout ({format_duration(timeout_s)})"
    )
