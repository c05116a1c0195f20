"""The loaded configuration as frozen values (DESIGN §3).

Everything here is immutable: tuples, read-only mappings, frozen dataclasses,
so a Config can be shared by the scheduler, the probes and the alert engine
without anyone changing it under the others. Secret-bearing fields are
`repr=False`, and secret strings are `monitor.redact.Secret`, whose repr is
`'***'`, so neither a log line nor a traceback shows a key.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

from monitor.errors import ConfigurationError
from monitor.protocols.base import Message
from monitor.sample import TargetKey

MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0
SCOPE_LABELS = ("provider", "model", "region", "prompt")
METRICS = ("ttft_ms", "ttft_answer_ms", "tps", "total_ms", "error_rate")
# What `kind: change` rules watch: a label of the answer that should stay put (issues 12, 16).
CHANGE_METRICS = ("served_by", "model_version", "system_fingerprint", "answer_fingerprint")
LATENCY_METRICS = ("ttft_ms", "ttft_answer_ms", "total_ms")
PAGERDUTY_URL = "https://events.pagerduty.com/v2/enqueue"


def frozen_map(items: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    return MappingProxyType(dict(items or {}))


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


class ConfigError(ConfigurationError):
    """Every problem in a config, one `path.in.file: message` line each.

    A `monitor.errors.ConfigurationError`, so the CLI prints it (prefixed with
    the file name) and exits 2 without knowing about this module.
    """

    def __init__(self, errors: list[str], source: str | None = None) -> None:
        super().__init__(list(errors), source)

    def __str__(self) -> str:
        return "\n".join(self.errors)


def scope_matches(match: Mapping[str, str], **labels: str | None) -> bool:
    """Does a scope (provider/model/region/prompt; None = wider) fit `match` globs?

    A label the scope does not have (a provider-wide alert has no model) only
    fits `*`: silencing one model must not mute the whole provider.
    """
    for label, pattern in match.items():
        value = labels.get(label)
        if value is None:
            if pattern != "*":
                return False
        elif not fnmatch.fnmatchcase(value, pattern):
            return False
    return True


@dataclass(frozen=True, slots=True)
class Defaults:
    interval_s: float = 300.0
    timeout_s: float = 60.0
    ttft_timeout_s: float = 30.0
    cache_bust: bool = True
    max_concurrency: int = 64  # probes in flight on this agent
    max_per_provider_region: int = 8  # in flight against one provider region


@dataclass(frozen=True, slots=True)
class Reasoning:
    """How hard a reasoning model thinks: an effort level or a token budget (exactly one is set)."""

    effort: str | None = None  # low | medium | high
    budget_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class ResponseFormat:
    """Structured output: the answer must match `json_schema` (OpenAI `response_format`)."""

    json_schema: Mapping[str, Any] = field(hash=False)
    name: str = "answer"
    strict: bool = True


@dataclass(frozen=True, slots=True)
class Synthetic:
    """A generated filler of `tokens` tokens before the question (long-context probes, no file to ship)."""

    tokens: int
    seed: int = 0


@dataclass(frozen=True, slots=True)
class ToolExpect:
    name: str  # the function the answer must call
    arguments: Mapping[str, Any] | None = field(default=None, hash=False)  # JSON Schema its arguments must match


@dataclass(frozen=True, slots=True)
class Expect:
    """Checks on the answer; a failed one makes the sample an `assertion` error (issue 16)."""

    contains: tuple[str, ...] = ()
    not_contains: tuple[str, ...] = ()
    regex: str | None = None
    json_schema: Mapping[str, Any] | None = field(default=None, hash=False)
    tool: ToolExpect | None = None
    max_chars: int | None = None
    min_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Prompt:
    name: str
    messages: tuple[Message, ...]
    max_tokens: int
    file: str | None = None  # as written in the config, for display
    temperature: float | None = None
    tools: tuple[Mapping[str, Any], ...] = field(default=(), hash=False)  # OpenAI-style function tools
    tool_choice: str | Mapping[str, Any] | None = field(default=None, hash=False)  # auto|none|required|{"name": fn}
    response_format: ResponseFormat | None = None
    synthetic: Synthetic | None = None
    expect: Expect | None = None
    reasoning: Reasoning | None = None


@dataclass(frozen=True, slots=True)
class Provider:
    name: str
    protocol: str
    regions: Mapping[str, str] = field(default_factory=_empty, hash=False)  # region -> base URL
    models: tuple[str, ...] = ()  # the provider's own ids
    api_key: str | None = field(default=None, repr=False)
    headers: Mapping[str, str] = field(default_factory=_empty, repr=False, hash=False)
    params: Mapping[str, Any] = field(default_factory=_empty, hash=False)
    options: Mapping[str, Any] = field(default_factory=_empty, hash=False)
    cache_bust: bool | None = None
    interval_s: float | None = None
    timeout_s: float | None = None
    ttft_timeout_s: float | None = None
    # id -> the name the model is compared under across providers (`as:`, else the id), for every model
    canonical: Mapping[str, str] = field(default_factory=_empty, hash=False)
    status_page: str | None = None  # Statuspage v2 summary JSON URL (issue 15)
    reasoning: Reasoning | None = None


@dataclass(frozen=True, slots=True)
class Check:
    providers: tuple[str, ...]
    prompts: tuple[str, ...]
    models: tuple[str, ...] = ()  # filter; empty = every model of each provider
    regions: tuple[str, ...] = ()  # filter; empty = every region
    interval_s: float | None = None
    timeout_s: float | None = None
    ttft_timeout_s: float | None = None
    agents: tuple[str, ...] = ()  # empty = every agent


@dataclass(frozen=True, slots=True)
class Target:
    """One cell of the matrix, with every setting resolved (check > provider > defaults)."""

    key: TargetKey
    protocol: str
    base_url: str
    prompt_spec: Prompt
    interval_s: float
    timeout_s: float
    ttft_timeout_s: float
    cache_bust: bool = True
    api_key: str | None = field(default=None, repr=False)
    headers: Mapping[str, str] = field(default_factory=_empty, repr=False, hash=False)
    params: Mapping[str, Any] = field(default_factory=_empty, hash=False)
    options: Mapping[str, Any] = field(default_factory=_empty, hash=False)
    agents: tuple[str, ...] = ()  # empty = every agent
    canonical_model: str = ""  # the provider's `as:` name for the model, else its id
    reasoning: Reasoning | None = None  # the prompt's, else the provider's

    @property
    def id(self) -> str:
        return self.key.id

    @property
    def provider(self) -> str:
        return self.key.provider

    @property
    def model(self) -> str:
        return self.key.model

    @property
    def region(self) -> str:
        return self.key.region

    @property
    def prompt(self) -> str:
        return self.key.prompt

    @property
    def max_tokens(self) -> int:
        return self.prompt_spec.max_tokens

    def runs_on(self, agent: str) -> bool:
        return not self.agents or agent in self.agents


@dataclass(frozen=True, slots=True)
class AlertRule:
    name: str
    metric: str  # one of METRICS; of CHANGE_METRICS for kind change
    kind: str  # regression | threshold | change
    severity: str = "page"
    min_change: float | None = None  # regression: relative shift, 0.5 = 50%
    percentile: float | None = None  # threshold on a latency/tps percentile
    above: float | None = None  # ms for latency, tokens/s for tps, fraction for error_rate
    below: float | None = None
    window_s: float = 15 * MINUTE
    min_samples: int = 5
    for_evaluations: int = 2  # consecutive bad evaluations before pending -> firing
    resolve_after: int = 3  # consecutive good evaluations before resolved
    repeat_interval_s: float = 4 * HOUR
    match: Mapping[str, str] = field(default_factory=_empty, hash=False)
    baseline_window_s: float | None = None  # regression only

    @property
    def pending_evaluations(self) -> int:
        return self.for_evaluations

    def matches(self, provider: str | None, model=None, region=None, prompt=None) -> bool:
        return scope_matches(self.match, provider=provider, model=model, region=region, prompt=prompt)


@dataclass(frozen=True, slots=True, kw_only=True)
class NotifierConfig:
    type: ClassVar[str] = ""
    name: str
    severities: tuple[str, ...] = ()  # empty = every severity

    def wants(self, severity: str) -> bool:
        return not self.severities or severity in self.severities


@dataclass(frozen=True, slots=True, kw_only=True)
class WebhookConfig(NotifierConfig):
    type: ClassVar[str] = "webhook"
    url: str
    secret: str | None = field(default=None, repr=False)  # HMAC-SHA256 key for X-Firsttoken-Signature
    headers: Mapping[str, str] = field(default_factory=_empty, repr=False, hash=False)
    timeout_s: float = 10.0


@dataclass(frozen=True, slots=True, kw_only=True)
class PagerDutyConfig(NotifierConfig):
    type: ClassVar[str] = "pagerduty"
    routing_key: str = field(repr=False)
    url: str = PAGERDUTY_URL
    timeout_s: float = 10.0


@dataclass(frozen=True, slots=True, kw_only=True)
class AppriseConfig(NotifierConfig):
    type: ClassVar[str] = "apprise"
    urls: tuple[str, ...] = field(default=(), repr=False)  # apprise URLs embed tokens


@dataclass(frozen=True, slots=True, kw_only=True)
class LogNotifierConfig(NotifierConfig):
    type: ClassVar[str] = "log"


@dataclass(frozen=True, slots=True, kw_only=True)
class AlertmanagerConfig(NotifierConfig):
    """Prometheus Alertmanager's API v2: alerts are posted to every URL (an HA cluster) and re-sent
    while firing, because Alertmanager resolves an alert it has not heard about for a while."""

    type: ClassVar[str] = "alertmanager"
    urls: tuple[str, ...] = ()
    timeout_s: float = 10.0
    resend_every_s: float = 60.0


NOTIFIER_TYPES: Mapping[str, type[NotifierConfig]] = MappingProxyType(
    {cls.type: cls for cls in (WebhookConfig, PagerDutyConfig, AppriseConfig, LogNotifierConfig, AlertmanagerConfig)}
)


@dataclass(frozen=True, slots=True)
class Silence:
    match: Mapping[str, str] = field(hash=False)
    until: datetime  # aware UTC
    starts: datetime | None = None
    reason: str = ""

    def active(self, now: datetime) -> bool:
        return (self.starts is None or self.starts <= now) and now < self.until

    def matches(self, provider: str | None, model=None, region=None, prompt=None) -> bool:
        return scope_matches(self.match, provider=provider, model=model, region=region, prompt=prompt)


@dataclass(frozen=True, slots=True)
class Price:
    input: float  # USD per million input tokens
    output: float  # USD per million output tokens (reasoning tokens are output)
    cached_input: float | None = None  # USD per million input tokens read from the provider's prompt cache

    def cost_usd(
        self, input_tokens: int | None, output_tokens: int | None, cached_input_tokens: int | None = None
    ) -> float:
        """`input_tokens` counts every prompt token, the cached ones included (as every protocol
        reports it); those `cached_input_tokens` cost `cached_input` when it is priced."""
        total_in = input_tokens or 0
        cached = min(cached_input_tokens or 0, total_in)
        cached_price = self.input if self.cached_input is None else self.cached_input
        return ((total_in - cached) * self.input + cached * cached_price + (output_tokens or 0) * self.output) / 1e6


@dataclass(frozen=True, slots=True)
class Budget:
    """A monthly spend cap over the probes' own cost (issue 16)."""

    monthly_usd: float
    action: str = "warn"  # warn: say so; refuse: stop probing priced targets until the month turns


@dataclass(frozen=True, slots=True)
class Retention:
    raw_s: float = 30 * DAY
    rollups_s: float = 400 * DAY


@dataclass(frozen=True, slots=True)
class Alerting:
    """How the leader runs alerting (`alerting:`); read when `firsttoken run` starts."""

    evaluate_every_s: float = 30.0  # an alert round
    deliver_every_s: float = 5.0  # the outbox is drained this often
    settle_s: float = 15.0  # samples younger than this wait for the next round (late writers)
    group_wait_s: float = 60.0  # a firing target waits this long for its provider-region group to form
    retry_after_s: float = 10.0  # a failed notification's first retry; doubling up to retry_max_s
    retry_max_s: float = 30 * MINUTE
    give_up_after_s: float = DAY  # a notification still undelivered this long after it was queued is failed


@dataclass(frozen=True, slots=True)
class Config:
    database_url: str = "sqlite:///firsttoken.db"
    agent: str = "local"
    defaults: Defaults = field(default_factory=Defaults)
    prompts: Mapping[str, Prompt] = field(default_factory=_empty, hash=False)
    providers: Mapping[str, Provider] = field(default_factory=_empty, hash=False)
    checks: tuple[Check, ...] = ()
    targets: tuple[Target, ...] = ()  # the expanded matrix, sorted by id
    alerts: tuple[AlertRule, ...] = ()
    notifiers: tuple[NotifierConfig, ...] = ()
    silences: tuple[Silence, ...] = ()
    prices: Mapping[str, Price] = field(default_factory=_empty, hash=False)  # "provider/model" -> Price
    retention: Retention = field(default_factory=Retention)
    alerting: Alerting = field(default_factory=Alerting)
    dashboard_url: str | None = None
    budget: Budget | None = None
    secrets: frozenset[str] = field(default=frozenset(), repr=False)
    source_path: Path | None = None

    def targets_for_agent(self, agent: str | None = None) -> tuple[Target, ...]:
        """The targets this agent probes: those with no `agents:` or naming it."""
        name = self.agent if agent is None else agent
        return tuple(t for t in self.targets if t.runs_on(name))

    def target(self, target_id: str) -> Target | None:
        return next((t for t in self.targets if t.id == target_id), None)

    def price(self, provider: str, model: str) -> Price | None:
        return self.prices.get(f"{provider}/{model}")
