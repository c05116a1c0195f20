"""The schema of `firsttoken.yaml` (DESIGN §3): one frozen model per section, the file as `FileSpec`.

The models are also the values the monitor reads (`provider.regions`,
`rule.window_s`): tuples and read-only mappings, so a Config can be shared by
the scheduler, the probes and the alert engine without anyone changing it
under the others. Secret-bearing fields are `repr=False` and their strings are
`monitor.redact.Secret`, whose repr is `'***'`. What spans sections (the
matrix, references between sections) is checked in `matrix` and `scopes`.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping
from dataclasses import field
from datetime import datetime
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, AliasChoices, BeforeValidator, Field, WithJsonSchema, field_validator
from pydantic.json_schema import SkipJsonSchema

from monitor.config.contracts import Contract, contract_list, contract_problems
from monitor.config.egress import ProxySetting
from monitor.config.errors import did_you_mean, fail, kind, problem
from monitor.config.fields import (
    ENV_REF,
    Bool,
    Headers,
    Json,
    Key,
    LoadContext,
    Name,
    Names,
    NonEmpty,
    OptionalSecret,
    Text,
    Texts,
    Timestamp,
    Url,
    alias,
    empty,
    entries,
    learn,
    number,
    percent,
    read_only,
    seconds,
    spec,
    text,
    unique,
)
from monitor.config.inhibit import InhibitRule
from monitor.config.notifiers import NotifierItem
from monitor.config.prompts import Prompt, Reasoning
from monitor.config.reports import ReportEntry
from monitor.config.selectors import SCOPE_LABELS, Scope, scope_matches
from monitor.config.slos import Slo
from monitor.config.status_site import MaintenanceWindow, Smtp, StatusSite
from monitor.config.vantage import Confirm
from monitor.sample import CACHE_ALERT_METRICS, CHANGE_METRICS, LATENCY_METRICS, RULE_METRICS
from monitor.units import DAY_S, HOUR_S, MINUTE_S, format_duration, parse_duration, parse_percent

MINUTE, HOUR, DAY = MINUTE_S, HOUR_S, DAY_S
METRICS = RULE_METRICS
RATE_METRICS = ("error_rate", "cache_hit_ratio")  # fractions over a window, not percentiles
MAX_LATENCY_MS = 24 * HOUR * 1000
DEFAULT_DATABASE_URL = "sqlite:///firsttoken.db"


def timeout_message(ttft_timeout_s: float, timeout_s: float) -> str:
    return (
        f"ttft_timeout ({format_duration(ttft_timeout_s)}) must not be longer than "
        f"timeout ({format_duration(timeout_s)})"
    )


def _auto(value: Any) -> Any:
    return None if isinstance(value, str) and value.strip() == "auto" else value


Cap = Annotated[
    number(1, 100_000, integer=True) | None,
    BeforeValidator(_auto),
    WithJsonSchema({"anyOf": [{"type": "integer", "minimum": 1, "maximum": 100_000}, {"const": "auto"}, ENV_REF]}),
]


@spec
class Defaults:
    interval_s: seconds(DAY) = alias("interval", 300.0)
    timeout_s: seconds(HOUR) = alias("timeout", 60.0)
    ttft_timeout_s: seconds(HOUR) = alias("ttft_timeout", 30.0)
    cache_bust: Bool = True
    # Probes in flight on this agent / against one provider region. None (`auto`, the default):
    # sized from the schedule and observed probe durations within a ceiling (monitor.agent.caps).
    max_concurrency: Cap = None
    max_per_provider_region: Cap = None

    def _finish(self, ctx: LoadContext | None) -> list[dict]:
        bad = self.ttft_timeout_s > self.timeout_s
        return [problem((), timeout_message(self.ttft_timeout_s, self.timeout_s))] if bad else []


# ----------------------------------------------------------------- providers
def registered_protocols() -> list[str]:
    try:
        from monitor.protocols import protocol_names

        return list(protocol_names())
    except Exception:  # a broken protocol module must not turn config errors into a traceback
        return []


def _protocol(value: Any) -> Any:
    known = sorted(registered_protocols())
    if isinstance(value, str) and value.strip() and value not in known:
        fail(f"unknown protocol {{got}}{did_you_mean(value, known)}; known: {', '.join(known)}")
    return value


def _model_name(value: Any) -> str:
    if not isinstance(value, str):
        fail(f"expected a string, got {kind(value)}")
    if not value.strip() or len(value) > 256 or any(c.isspace() or not c.isprintable() for c in value):
        fail("invalid model name {got}: no spaces" if value.strip() else "must not be empty")
    return value


ModelName = Annotated[str, BeforeValidator(_model_name)]


@spec
class ModelEntry:
    """A provider's model id, and the name it is compared under across providers (`as:`)."""

    name: ModelName
    as_: ModelName | None = alias("as", None)


def _model_entry(value: Any) -> Any:
    """`gpt-4o` is short for `{name: gpt-4o}`; its errors are about the entry itself."""
    return value if isinstance(value, Mapping) else {"name": _model_name(value)}


def _unique_models(models: tuple[ModelEntry, ...]) -> tuple[ModelEntry, ...]:
    unique(tuple(m.name for m in models))
    return models


def _regions(regions: Mapping[str, str]) -> Mapping[str, str]:
    if not regions:
        fail("must name at least one region")
    return read_only(regions)


@spec(kw_only=True)
class Provider:
    name: SkipJsonSchema[str] = field(default="", init=False)  # its key under providers:
    # Credentials first: a value below that contains one is then stored masked.
    api_key: OptionalSecret = field(default=None, repr=False)
    headers: Headers = field(default_factory=empty, repr=False, hash=False)
    protocol: Annotated[Text, BeforeValidator(_protocol)]
    regions: Annotated[Mapping[Key, Url], AfterValidator(_regions)] = field(hash=False)  # region -> base URL
    entries: Annotated[
        tuple[Annotated[ModelEntry, BeforeValidator(_model_entry, json_schema_input_type=str | ModelEntry)], ...],
        NonEmpty,
        AfterValidator(_unique_models),
    ] = Field(..., validation_alias="models")
    params: Json = field(default_factory=empty, hash=False)  # extra request-body fields
    options: Json = field(default_factory=empty, hash=False)  # protocol options
    cache_bust: Bool | None = None
    interval_s: seconds(DAY) | None = alias("interval", None)
    timeout_s: seconds(HOUR) | None = alias("timeout", None)
    ttft_timeout_s: seconds(HOUR) | None = alias("ttft_timeout", None)
    status_page: Url | None = None  # Statuspage v2 summary JSON URL
    reasoning: Reasoning | None = None
    # Egress proxy for this provider's probes (URL, or `direct`); unset: HTTPS_PROXY/HTTP_PROXY/NO_PROXY.
    proxy: ProxySetting | None = field(default=None, repr=False, hash=False)
    # DESIGN §17: what the provider owes (one contract, or a list narrowed by model / region).
    contracts: Annotated[tuple[Contract, ...], contract_list] = alias("contract", ())

    @property
    def models(self) -> tuple[str, ...]:
        """The provider's own model ids."""
        return tuple(m.name for m in self.entries)

    @property
    def canonical(self) -> Mapping[str, str]:
        """id -> the name the model is compared under across providers (`as:`, else the id), every model."""
        return read_only({m.name: m.as_ or m.name for m in self.entries})

    def _finish(self, ctx: LoadContext | None) -> list[dict]:
        errors = contract_problems(self.contracts, self.models, self.regions)
        if self.protocol not in registered_protocols():
            return errors
        from monitor.protocols import get_protocol

        try:
            found = get_protocol(self.protocol).config_errors(dict(self.options), self.api_key is not None) or ()
        except Exception as exc:  # the protocol's own bug must not hide the other errors
            found = [f"options: could not be checked by the {self.protocol} protocol ({type(exc).__name__})"]
        for line in map(str, found):
            where, sep, message = line.partition(": ")
            errors.append(problem(tuple(where.split(".")), message) if sep else problem((), line))
        return errors


# -------------------------------------------------------------------- checks
def _filter(values: tuple[str, ...]) -> tuple[str, ...]:
    if not values:
        fail("must not be empty (leave it out for every one)")
    return values


Filter = Annotated[Texts, AfterValidator(_filter)]


@spec
class Check:
    """One entry of `checks:`: expands to providers × models × regions × prompts."""

    providers: Annotated[Texts, NonEmpty]
    prompts: Annotated[Texts, NonEmpty]
    models: Filter = ()  # empty = every model of each provider
    regions: Filter = ()  # empty = every region
    interval_s: seconds(DAY) | None = alias("interval", None)
    timeout_s: seconds(HOUR) | None = alias("timeout", None)
    ttft_timeout_s: seconds(HOUR) | None = alias("ttft_timeout", None)
    agents: Names = ()  # empty = every agent


KINDS = ("regression", "threshold", "change")
Level = Annotated[float, WithJsonSchema({"type": ["number", "string"], "examples": [2000, "2s", "20%"]})]
KIND_ONLY = {
    "regression": ("min_change", "baseline_window", "min_duration"),
    "threshold": ("percentile", "above", "below"),
}
NUMERIC_ONLY = ("window", "min_samples")  # a change rule compares labels, not numbers over a window
CHANGE_EVALUATIONS = 3  # a label must differ this many rounds in a row: one odd answer is not a change


@spec
class AlertRule:
    name: Name
    metric: Text  # one of METRICS; of CHANGE_METRICS for kind change
    kind: Literal["regression", "threshold", "change"]
    severity: Name = "page"
    min_change: percent(10.0, positive=True) | None = None  # regression: relative shift, 0.5 = 50%
    percentile: number(0, 100) | None = None  # threshold on a latency/tps percentile
    above: Level | None = None  # ms for latency, tokens/s for tps, fraction for error_rate
    below: Level | None = None
    window_s: seconds(7 * DAY) = alias("window", 15 * MINUTE)
    min_samples: number(1, 100_000, integer=True) = 5
    # consecutive bad evaluations before pending -> firing
    for_evaluations: number(1, 1000, integer=True) = Field(
        2, validation_alias=AliasChoices("for_evaluations", "pending_evaluations")
    )
    resolve_after: number(1, 1000, integer=True) = 3  # consecutive good evaluations before resolved
    repeat_interval_s: seconds(30 * DAY) = alias("repeat_interval", 4 * HOUR)
    match: Scope = field(default_factory=empty, hash=False)
    baseline_window_s: seconds(90 * DAY) | None = alias("baseline_window", None)  # regression only
    # regression only: how long a shift must have held before it pages (unset: the detector's 10 minutes)
    min_duration_s: seconds(DAY) | None = alias("min_duration", None)
    # Cache probes (DESIGN §13): which half of the cold/warm pair a latency rule watches. Unset, a
    # latency or tps rule watches the cold probes of a cache target (comparable with its other
    # probes), error_rate every probe, and cache_hit_ratio the warm ones.
    cache_state: Literal["cold", "warm"] | None = None
    # Vantage points (DESIGN §11): how many agents must see the condition for a target alert (default: a
    # majority of those probing, at least 2 of 2+), and the severity of an alert seen from fewer.
    confirm: Confirm | None = None
    vantage_severity: Name = "ticket"
    runbook: Url | None = None  # DESIGN §18: what on-call should do, linked from every notification

    @property
    def pending_evaluations(self) -> int:
        return self.for_evaluations

    def matches(self, provider: str | None, model=None, region=None, prompt=None) -> bool:
        return scope_matches(self.match, provider=provider, model=model, region=region, prompt=prompt)

    @field_validator("above", "below", mode="before")
    @classmethod
    def _level(cls, value: Any, info: Any) -> Any:
        """A fraction for error_rate; ms (a number or a duration like `2s`) for latency; tokens/s for tps."""
        metric = info.data.get("metric")
        if value is None:
            return None
        if metric in RATE_METRICS:
            return _fraction(value)
        if metric in LATENCY_METRICS and isinstance(value, str):
            try:
                value = parse_duration(value) * 1000
            except ValueError:
                fail("expected milliseconds or a duration like 2s, got {got}")
        return float(_bounded(value, MAX_LATENCY_MS if metric in LATENCY_METRICS else 1e6))

    @classmethod
    def _prepare(cls, data: dict[str, Any]) -> tuple[dict[str, Any], list[dict]]:
        """Keys that belong to another kind, the metrics each kind watches, and each kind's defaults."""
        errors, rule_kind, metric = [], data.get("kind"), data.get("metric")
        if "for_evaluations" in data and "pending_evaluations" in data:
            errors.append(problem(("pending_evaluations",), "give for_evaluations or pending_evaluations, not both"))
        if rule_kind not in KINDS:
            return data, errors  # the kind's own error says it
        for other, keys in KIND_ONLY.items():
            errors += [problem((k,), f"only for kind: {other}") for k in keys if other != rule_kind and k in data]
        if rule_kind == "change":
            errors += [problem((k,), "not for kind: change") for k in NUMERIC_ONLY if k in data]
            if "pending_evaluations" not in data:
                data.setdefault("for_evaluations", CHANGE_EVALUATIONS)
        wanted, other = (CHANGE_METRICS, METRICS) if rule_kind == "change" else (METRICS, CHANGE_METRICS)
        if isinstance(metric, str) and metric not in wanted:
            why = f"{'is not for' if rule_kind == 'change' else 'needs'} kind: change" if metric in other else ""
            start = f"{metric} {why}" if why else f"unknown metric {{got}}{did_you_mean(metric, wanted)}"
            errors.append(problem(("metric",), f"{start}; expected one of {', '.join(wanted)}", metric))
        if metric in CACHE_ALERT_METRICS and rule_kind != "threshold":
            errors.append(problem(("kind",), f"{metric} takes kind: threshold (e.g. below: 50%)"))
        if metric in CACHE_ALERT_METRICS and data.get("cache_state") not in (None, "warm"):
            errors.append(problem(("cache_state",), f"{metric} is a share of warm probes: warm or unset"))
        if rule_kind == "regression":
            data = {"min_change": 0.5, "baseline_window": DAY, **data}
        elif rule_kind == "threshold":
            if len([k for k in ("above", "below") if data.get(k) is not None]) != 1:
                errors.append(problem((), "a threshold needs exactly one of above or below"))
            if metric in RATE_METRICS and data.get("percentile") is not None:
                errors.append(problem(("percentile",), f"not for {metric} (it is a rate over the window)"))
            elif metric not in RATE_METRICS:
                data.setdefault("percentile", 50.0)
        return data, errors

    def _finish(self, ctx: LoadContext | None) -> list[dict]:
        if self.baseline_window_s is not None and self.baseline_window_s <= self.window_s:
            return [problem(("baseline_window",), "must be longer than window")]
        return []


def _fraction(value: Any) -> float:
    try:
        return parse_percent(value)
    except ValueError as exc:
        fail(f"{exc}, got {{got}}")


def _bounded(value: Any, hi: float) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        fail(f"expected a number, got {kind(value)}")
    if not 0 < value <= hi:
        fail(f"must be greater than 0 and at most {hi:,.0f}")
    return value


@spec
class Silence:
    """Mutes notifications for the targets its `match:` fits until `until:`; measurement goes on."""

    match: Scope = field(hash=False)
    until: Timestamp  # aware UTC
    starts: Timestamp | None = None
    reason: text(1000) = ""

    def active(self, now: datetime) -> bool:
        return (self.starts is None or self.starts <= now) and now < self.until

    def matches(self, provider: str | None, model=None, region=None, prompt=None) -> bool:
        return scope_matches(self.match, provider=provider, model=model, region=region, prompt=prompt)

    def _finish(self, ctx: LoadContext | None) -> list[dict]:
        if not self.match:
            return [problem(("match",), f"must name at least one of {', '.join(SCOPE_LABELS)}")]
        if self.starts is not None and self.starts >= self.until:
            return [problem(("until",), "must be after starts")]
        return []


# ------------------------------------------------------- costs and storage
Usd = number(0, 1e6)


@spec
class Price:
    input: Usd  # USD per million input tokens
    output: Usd  # USD per million output tokens (reasoning tokens are output)
    cached_input: Usd | None = None  # USD per million input tokens read from the provider's prompt cache
    cache_write: Usd | None = None  # USD per million input tokens written to it (Anthropic, Bedrock bill them apart)

    def cost_usd(
        self,
        input_tokens: int | None,
        output_tokens: int | None,
        cache_read_tokens: int | None = None,
        cache_write_tokens: int | None = None,
    ) -> float:
        """`input_tokens` counts every prompt token, the cached and written ones included (as every
        protocol reports it); the `cache_read_tokens` read from the cache cost `cached_input` and
        the `cache_write_tokens` cost `cache_write` where those are priced, else `input`."""
        total_in = input_tokens or 0
        cached = min(cache_read_tokens or 0, total_in)
        written = min(cache_write_tokens or 0, total_in - cached)
        cached_price = self.input if self.cached_input is None else self.cached_input
        write_price = self.input if self.cache_write is None else self.cache_write
        input_usd = (total_in - cached - written) * self.input + cached * cached_price + written * write_price
        return (input_usd + (output_tokens or 0) * self.output) / 1e6


@spec
class Budget:
    """A monthly spend cap over the probes' own cost."""

    monthly_usd: number(0, 1e9, lo_open=True)
    action: Literal["warn", "refuse"] = "warn"  # refuse: no more priced probes until the month turns


@spec
class Retention:
    raw_s: seconds(3650 * DAY, min_s=HOUR) = alias("raw", 30 * DAY)
    rollups_s: seconds(3650 * DAY, min_s=HOUR) = alias("rollups", 400 * DAY)

    def _finish(self, ctx: LoadContext | None) -> list[dict]:
        return [problem(("rollups",), "must be at least as long as raw")] if self.rollups_s < self.raw_s else []


@spec
class Alerting:
    """How the leader runs alerting (`alerting:`); read when `firsttoken run` starts."""

    evaluate_every_s: seconds(HOUR) = alias("evaluate_every", 30.0)  # an alert round
    deliver_every_s: seconds(10 * MINUTE) = alias("deliver_every", 5.0)  # the outbox is drained this often
    settle_s: seconds(10 * MINUTE) = alias("settle", 15.0)  # younger samples wait for the next round
    group_wait_s: seconds(HOUR) = alias("group_wait", 60.0)  # a firing target waits for its group to form
    retry_after_s: seconds(HOUR) = alias("retry_after", 10.0)  # first retry; doubling up to retry_max_s
    retry_max_s: seconds(DAY) = alias("retry_max", 30 * MINUTE)
    give_up_after_s: seconds(7 * DAY) = alias("give_up_after", DAY)  # undelivered this long: failed

    def _finish(self, ctx: LoadContext | None) -> list[dict]:
        late = [("retry_max", self.retry_max_s), ("give_up_after", self.give_up_after_s)]
        return [problem((k,), "must be at least retry_after") for k, v in late if v < self.retry_after_s]


def _database(value: Any, info: Any) -> Any:
    if isinstance(value, str):
        with contextlib.suppress(ValueError):  # reported below
            learn(urlsplit(value.strip()).password or "", info)
        found = database_problem(value)
        if found:
            fail(found)
    return value


def database_problem(url: str) -> str | None:
    """What the storage layer would refuse at start-up, found now (and without importing SQLAlchemy)."""
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*://\S*", url.strip()):
        return "not a database URL (like sqlite:///firsttoken.db or postgresql+psycopg://...), got {got}"
    backend = url.split("://", 1)[0].split("+", 1)[0].lower()
    if backend not in ("sqlite", "postgres", "postgresql"):
        return f"unsupported database {backend!r}: use postgresql+psycopg://… or sqlite:///path"
    if backend == "sqlite":
        return None
    try:  # the messages leave the URL out: it may hold a password
        host_port = urlsplit(url.strip()).netloc.rpartition("@")[2]
    except ValueError:  # e.g. an unclosed [ of an IPv6 host
        return "not a database URL: the host cannot be parsed"
    port = host_port.rpartition("]")[2] if host_port.startswith("[") else host_port
    if ":" in port and not (port.rpartition(":")[2].isdigit() and int(port.rpartition(":")[2]) <= 65535):
        return "not a database URL: the port must be a number up to 65535"
    return None


@spec
class FileSpec:
    """The whole file. Sections of entries load entry by entry (see `fields.entries`)."""

    database: Annotated[Text, BeforeValidator(_database)] | None = None  # FIRSTTOKEN_DATABASE_URL overrides
    agent: Name = "local"  # this probe agent's vantage point; FIRSTTOKEN_AGENT overrides
    defaults: Defaults = Defaults()
    prompts: Annotated[Mapping[Key, Prompt], entries(keyed=True, named=True)] = field(default_factory=empty, hash=False)
    providers: Annotated[Mapping[Key, Provider], entries(keyed=True, named=True)] = field(
        default_factory=empty, hash=False
    )
    checks: Annotated[tuple[Check, ...], entries()] = ()
    alerts: Annotated[tuple[AlertRule, ...], entries()] = ()
    notifiers: Annotated[tuple[NotifierItem, ...], entries()] = ()
    silences: Annotated[tuple[Silence, ...], entries()] = ()
    # "provider/model" -> USD per million tokens
    prices: Annotated[Mapping[Text, Price], entries(keyed=True)] = field(default_factory=empty, hash=False)
    retention: Retention = Retention()
    alerting: Alerting = Alerting()
    dashboard_url: Url | None = None
    public_url: Url | None = None  # DESIGN §18: run --listen as others reach it (alert charts, silence links)
    budget: Budget | None = None
    slos: Annotated[tuple[Slo, ...], entries()] = ()
    inhibit: Annotated[tuple[InhibitRule, ...], entries()] = ()  # unset: DEFAULT_INHIBIT (DESIGN §15)
    status_site: StatusSite = StatusSite()  # DESIGN §16
    smtp: Smtp | None = None
    maintenance: Annotated[tuple[MaintenanceWindow, ...], entries()] = ()
    reports: Annotated[tuple[ReportEntry, ...], entries()] = ()  # DESIGN §17: mailed by the leader


SECTIONS = tuple(FileSpec.__pydantic_fields__)
