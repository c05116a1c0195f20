"""Notifiers (DESIGN §5): one module per type, the same small interface, found here by type.

    notifier = build_notifier(config.notifiers[0], secrets=config.secrets)
    notifier.send(body, event="firing", delivery_id="42")   # or raises DeliveryError
    notifier.close()

Adding a notifier type is one module with `create(config, secrets)` and one
line in `REGISTRY` (plus its config class in `monitor.config_schema`).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable

from monitor.alerts.notifiers.base import DeliveryError, Notifier

__all__ = ["REGISTRY", "DeliveryError", "Notifier", "build_notifier"]

# type -> module; imported on first use (apprise takes seconds to load its plugins).
REGISTRY = {
    "webhook": "monitor.alerts.notifiers.webhook",
    "pagerduty": "monitor.alerts.notifiers.pagerduty",
    "apprise": "monitor.alerts.notifiers.apprise",
    "log": "monitor.alerts.notifiers.log",
    "alertmanager": "monitor.alerts.notifiers.alertmanager",
}


def build_notifier(config, secrets: Iterable[str] = ()) -> Notifier:
    module = REGISTRY.get(config.type)
    if module is None:
        raise DeliveryError(f"unknown notifier type {config.type!r}", retryable=False)
    return importlib.import_module(module).create(config, secrets)
