"""`notifiers:` entries: the fields every notifier has, and the `type:` that picks its config.

Each notifier type is one module in `monitor/alerts/notifiers/`, holding its
config (a `NotifierConfig` subclass naming its `type`, with its secret fields
typed `SecretText`), and its `create(config, secrets)`. The modules are
found by scanning that package, so adding a type edits no table here. The
package is named, not imported: the config does not depend on alerting;
alerting's notifiers depend on the config.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from functools import cache
from typing import Annotated, Any, ClassVar

from pydantic import PlainValidator, TypeAdapter

from monitor.config.errors import did_you_mean, fail, kind
from monitor.config.fields import Name, Names, is_http_url, seconds, secret_text, spec

PLUGINS = "monitor.alerts.notifiers"  # one module per notifier type
Timeout = seconds(300.0)  # a receiver that takes longer is down, as far as paging goes


def _http_url(value: str) -> None:
    if not is_http_url(value):
        fail("not a URL (expected https://host/...)")  # the value is a secret: never echoed


# A URL that is itself the credential (a Slack incoming webhook, a Teams Workflows URL with its `sig=`):
# checked like a URL, kept and masked like a password.
SecretUrl = secret_text(check=_http_url)


@spec(kw_only=True)
class NotifierConfig:
    type: ClassVar[str] = ""
    # Top-level sections this type sends through (`email`: `smtp`); the loader says when one is missing.
    needs: ClassVar[tuple[str, ...]] = ()
    name: Name
    severities: Names = ()  # empty = every severity

    def wants(self, severity: str) -> bool:
        return not self.severities or severity in self.severities


@cache
def _scan() -> tuple[type[NotifierConfig], ...]:
    package = importlib.import_module(PLUGINS)
    found: list[type[NotifierConfig]] = []
    for module_info in pkgutil.iter_modules(package.__path__):  # sorted by module name
        module = importlib.import_module(f"{PLUGINS}.{module_info.name}")
        found += [
            v
            for v in vars(module).values()
            if isinstance(v, type) and issubclass(v, NotifierConfig) and "type" in v.__dict__ and v.type
        ]
    return tuple(dict.fromkeys(found))


def notifier_types(name: str | None = None) -> Mapping[str, type[NotifierConfig]]:
    """type -> config class, for every notifier module. Asked for a `name` it does not know, it scans
    again first (a module added since; a typo costs one scan of a small package)."""
    if name is not None and name not in {c.type for c in _scan()}:
        _scan.cache_clear()
    return {cls.type: cls for cls in _scan()}


@cache
def _adapter(cls: type[NotifierConfig]) -> TypeAdapter:
    return TypeAdapter(cls)


def _pick(value: Any, info: Any) -> NotifierConfig:
    """One `notifiers:` entry: its `type:` picks the config class that validates the rest."""
    if not isinstance(value, Mapping):
        fail(f"expected a mapping, got {kind(value)}")
    tag = value.get("type")
    types = notifier_types(tag if isinstance(tag, str) else None)
    choices = ", ".join(types)
    if tag is None:
        fail(f"required: one of {choices}", at=("type",))
    if not isinstance(tag, str) or tag not in types:
        message = f"unknown notifier type {{got}}{did_you_mean(tag, types)}; expected one of {choices}"
        fail(message, at=("type",), value=tag)
    rest = {k: v for k, v in value.items() if k != "type"}
    return _adapter(types[tag]).validate_python(rest, context=info.context)


# The JSON Schema of an entry is the union of every type's (built by `editor`, from the same scan).
NotifierItem = Annotated[NotifierConfig, PlainValidator(_pick, json_schema_input_type=NotifierConfig)]
