"""`notifiers:` entries: the common fields, one config per type, and the `type:` that picks it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Annotated, Any, ClassVar, Union

from pydantic import BeforeValidator, Field, PlainValidator, TypeAdapter

from monitor.config.errors import did_you_mean, fail, kind, problem
from monitor.config.fields import (
    Headers,
    Name,
    Names,
    NonEmpty,
    OptionalSecret,
    SecretText,
    Url,
    alias,
    check_url,
    empty,
    seconds,
    spec,
)

PAGERDUTY_URL = "https://events.pagerduty.com/v2/enqueue"
Timeout = seconds(300.0)


@spec(kw_only=True)
class NotifierConfig:
    type: ClassVar[str] = ""
    name: Name
    severities: Names = ()  # empty = every severity

    def wants(self, severity: str) -> bool:
        return not self.severities or severity in self.severities


@spec(kw_only=True)
class WebhookConfig(NotifierConfig):
    type: ClassVar[str] = "webhook"
    url: Url
    secret: OptionalSecret = field(default=None, repr=False)  # HMAC-SHA256 key for X-Firsttoken-Signature
    headers: Headers = field(default_factory=empty, repr=False, hash=False)
    timeout_s: Timeout = alias("timeout", 10.0)


@spec(kw_only=True)
class PagerDutyConfig(NotifierConfig):
    type: ClassVar[str] = "pagerduty"
    routing_key: SecretText = field(repr=False)
    url: Url = PAGERDUTY_URL
    timeout_s: Timeout = alias("timeout", 10.0)


def _apprise_url(value: Any) -> Any:
    if isinstance(value, str) and value and "://" not in value:
        fail("not an apprise URL (expected scheme://...)")
    return value


@spec(kw_only=True)
class AppriseConfig(NotifierConfig):
    type: ClassVar[str] = "apprise"
    # apprise URLs carry their tokens (slack://T/B/secret): every one is a secret
    urls: tuple[Annotated[SecretText, BeforeValidator(_apprise_url)], ...] = field(default=(), repr=False)

    def _finish(self, ctx: Any) -> list[dict]:
        return [] if self.urls else [problem(("urls",), "required: at least one apprise URL")]


@spec(kw_only=True)
class LogNotifierConfig(NotifierConfig):
    type: ClassVar[str] = "log"


def _one_or_many(value: Any, info: Any) -> Any:
    """One URL, or a list: every member of an Alertmanager cluster gets each alert (they dedupe).
    A single URL's errors are about the key itself."""
    return [check_url(value, info)] if isinstance(value, str) else value


@spec(kw_only=True)
class AlertmanagerConfig(NotifierConfig):
    """Prometheus Alertmanager's API v2: alerts are posted to every URL (an HA cluster) and re-sent
    while firing, because Alertmanager resolves an alert it has not heard about for a while."""

    type: ClassVar[str] = "alertmanager"
    urls: Annotated[
        tuple[Url, ...], BeforeValidator(_one_or_many, json_schema_input_type=str | list[str]), NonEmpty
    ] = Field(..., validation_alias="url")
    timeout_s: Timeout = alias("timeout", 10.0)
    resend_every_s: seconds(3600.0) = alias("resend_every", 60.0)


NOTIFIER_TYPES: Mapping[str, type[NotifierConfig]] = {
    cls.type: cls for cls in (WebhookConfig, PagerDutyConfig, AppriseConfig, LogNotifierConfig, AlertmanagerConfig)
}


def notifier_item() -> Any:
    """One `notifiers:` entry: its `type:` picks the config class (the JSON Schema lists them all)."""
    types = dict(NOTIFIER_TYPES)
    adapters = {name: TypeAdapter(cls) for name, cls in types.items()}

    def pick(value: Any, info: Any) -> NotifierConfig:
        if not isinstance(value, Mapping):
            fail(f"expected a mapping, got {kind(value)}")
        tag, choices = value.get("type"), ", ".join(types)
        if tag is None:
            fail(f"required: one of {choices}", at=("type",))
        if not isinstance(tag, str) or tag not in types:
            fail(
                f"unknown notifier type {{got}}{did_you_mean(tag, types)}; expected one of {choices}",
                at=("type",),
                value=tag,
            )
        rest = {k: v for k, v in value.items() if k != "type"}
        return adapters[tag].validate_python(rest, context=info.context)

    return Annotated[NotifierConfig, PlainValidator(pick, json_schema_input_type=Union[tuple(types.values())])]  # noqa: UP007
