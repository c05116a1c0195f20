"""Notifiers (DESIGN §5): one module per type, the same small interface, found by scanning this package.

    notifier = build_notifier(config.notifiers[0], secrets=config.secrets, context=Context(smtp=config.smtp))
    notifier.send(body, event="firing", delivery_id="42")   # or raises DeliveryError
    notifier.close()

Adding a notifier type is one module here, and its test: its config (a
`monitor.config.notifiers.NotifierConfig` subclass naming its `type`, with
its secret fields typed `SecretText`) and `create(config, secrets)`
returning an object with `send` and `close`; a `create` that also takes
`context` (a `Context`: the config's `smtp:`, the alert's chart) is given it. The config loader finds it
(`notifier_types`), so `type: <yours>` loads from YAML and shows in the
JSON Schema; nothing else needs an entry.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterable

from monitor.alerts.notifiers.base import NO_CONTEXT, Context, DeliveryError, Notifier
from monitor.config.notifiers import NotifierConfig

__all__ = ["Context", "DeliveryError", "Notifier", "build_notifier"]


def build_notifier(config: NotifierConfig, secrets: Iterable[str] = (), context: Context | None = None) -> Notifier:
    """The notifier for a config: the `create` of the module its config class lives in. `context`
    carries what some need beyond their entry (the config's `smtp:`, the alert chart)."""
    create = getattr(importlib.import_module(type(config).__module__), "create", None)
    if create is None:
        raise DeliveryError(f"notifier type {config.type!r} has no create()", retryable=False)
    if "context" in inspect.signature(create).parameters:
        return create(config, secrets, context=context or NO_CONTEXT)
    return create(config, secrets)  # a type that needs nothing beyond its entry
