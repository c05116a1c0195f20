"""References between sections outside the matrix: `match:` names in alerts and silences,
unique rule and notifier names, notifier severities, and the `provider/model` of each price.

A literal (glob-free) name must exist, to catch typos that would match
nothing; a misspelt severity would route nothing to a notifier, so nobody gets paged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from monitor.config.errors import did_you_mean, path_of, problem
from monitor.config.fields import LoadContext
from monitor.config.matrix import declared
from monitor.config.reports import report_problems
from monitor.config.schema import SCOPE_LABELS, FileSpec

_GLOB = set("*?[")


def check_references(spec: FileSpec, tree: Mapping[str, Any], ctx: LoadContext) -> None:
    names = _matchable(spec, tree)
    for section in ("alerts", "silences", "slos"):
        for i, entry in enumerate(getattr(spec, section)):
            for label, pattern in entry.match.items() if entry else ():
                known = names[label]
                if known and not (_GLOB & set(pattern)) and pattern not in known:
                    message = f"unknown {label} {{got}}{did_you_mean(pattern, known)}"
                    ctx.errors.append(problem((section, i, "match", label), message, pattern))
    _unique_names(ctx, "alerts", "rule", spec.alerts)
    _unique_names(ctx, "notifiers", "notifier", spec.notifiers)
    _unique_names(ctx, "slos", "SLO", spec.slos)
    used = {rule.severity for rule in spec.alerts if rule} | ({"page", "ticket"} if any(spec.slos) else set())
    for i, notifier in enumerate(spec.notifiers):
        for j, severity in enumerate(notifier.severities if notifier and used else ()):
            if severity not in used:
                message = f"no alert rule has severity {severity!r}{did_you_mean(severity, used)}"
                ctx.errors.append(problem(("notifiers", i, "severities", j), message))
    for i, notifier in enumerate(spec.notifiers):  # an email notifier sends through `smtp:` (DESIGN §18)
        for section in notifier.needs if notifier else ():
            if getattr(spec, section, None) is None:
                ctx.errors.append(
                    problem(
                        ("notifiers", i, "type"),
                        f"type {notifier.type} sends through the {section}: section, which is missing",
                    )
                )
    written = tree.get("providers")  # a broken provider is still one the reports may name
    ctx.errors += report_problems(spec.reports, set(written) if isinstance(written, Mapping) else set(), spec.smtp)
    _price_keys(ctx, spec, tree)


def _matchable(spec: FileSpec, tree: Mapping[str, Any]) -> dict[str, set[str]]:
    """The names a `match:` may spell out literally. When a provider failed to
    load its models and regions are unknown, so those labels go unchecked."""
    providers = declared(tree.get("providers"))
    complete = set(spec.providers) == providers
    loaded = spec.providers.values()
    return {
        "provider": providers,
        "model": {m for p in loaded for m in p.models} if complete else set(),
        "region": {g for p in loaded for g in p.regions} if complete else set(),
        "prompt": declared(tree.get("prompts")),
    }


def _unique_names(ctx: LoadContext, section: str, what: str, entries: tuple) -> None:
    seen: dict[str, int] = {}
    for i, entry in enumerate(entries):
        if entry is None:
            continue
        if entry.name in seen:
            also = path_of((section, seen[entry.name]))
            ctx.errors.append(problem((section, i, "name"), f"duplicate {what} name {entry.name!r} (also {also})"))
        seen.setdefault(entry.name, i)


def _price_keys(ctx: LoadContext, spec: FileSpec, tree: Mapping[str, Any]) -> None:
    providers = sorted(declared(tree.get("providers")))
    prices = tree.get("prices")
    for key in [k for k in prices if isinstance(k, str)] if isinstance(prices, Mapping) else ():
        name, _, model = key.partition("/")
        loc = ("prices", key)
        if not model:
            ctx.errors.append(problem(loc, "expected provider/model, e.g. openai/gpt-4o-mini"))
        elif name not in providers:
            ctx.errors.append(problem(loc, f"unknown provider {name!r}{did_you_mean(name, providers)}"))
        elif name in spec.providers and model not in spec.providers[name].models:
            models = spec.providers[name].models
            ctx.errors.append(problem(loc, f"provider {name!r} has no model {model!r}{did_you_mean(model, models)}"))


__all__ = ["SCOPE_LABELS", "check_references"]
