"""A provider's `contract:` (DESIGN §17): what it owes, in the contract's own measure.

    providers:
      bedrock:
        contract:
          uptime:
            minute_down: {error_rate: 5%}     # ≥ 5% of a minute's probes failed server-side
            credits: [{below: 99.9%, credit: 10%}, {below: 99.0%, credit: 25%}, {below: 95.0%, credit: 100%}]
          latency:
            minute_ok: {tps_at_least: 50}     # or ttft_at_most: 2s
            objective: 99%
          claim_days: 30

`contract:` is one contract for all the provider's targets, or a list of them, each narrowed with
`match: {model: …, region: …}` (a contract per model or per region, as providers sell them). A
minute's error rate counts server-side failures only (`SERVER_SIDE`): an auth error, a rate limit or
a failed answer check is the customer's business or ours, never the provider's downtime.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, ValidationError, WrapValidator

from monitor.config.errors import fail, kind, problem, raise_all
from monitor.config.fields import LoadContext, Name, Text, alias, empty, number, percent, read_only, seconds, spec
from monitor.sample import ErrorKind

# What a provider's SLA counts as its failure: it answered 5xx, timed out, refused the connection or
# broke the stream. Never auth, rate_limited, client_error, assertion (the request's or our fault).
SERVER_SIDE = (ErrorKind.SERVER_ERROR, ErrorKind.TIMEOUT, ErrorKind.CONNECT, ErrorKind.STREAM_ERROR)
COUNTABLE_KINDS = tuple(str(k) for k in ErrorKind if k is not ErrorKind.CANCELLED)
CONTRACT_LABELS = ("model", "region")


def _kinds(value: Any) -> Any:
    if isinstance(value, list | tuple):
        unknown = [v for v in value if v not in COUNTABLE_KINDS]
        if unknown:
            fail(f"unknown error kind {unknown[0]!r} (one of {', '.join(COUNTABLE_KINDS)})")
    return value


@spec
class MinuteDown:
    """When a minute is down: at least `error_rate` of its probes failed with one of `kinds`."""

    error_rate: percent(positive=True) = 0.05
    kinds: Annotated[tuple[Text, ...], BeforeValidator(_kinds)] = tuple(str(k) for k in SERVER_SIDE)


@spec
class CreditTier:
    below: percent(positive=True)  # monthly uptime under this ...
    credit: percent(positive=True)  # ... earns this share of the month's bill


def _tiers(tiers: tuple[CreditTier, ...]) -> tuple[CreditTier, ...]:
    """Highest `below` first: the tier reached is the last whose `below` the uptime is under."""
    belows = [t.below for t in tiers]
    if len(set(belows)) != len(belows):
        fail("two tiers have the same `below`")
    return tuple(sorted(tiers, key=lambda t: -t.below))


@spec
class UptimeTerms:
    minute_down: MinuteDown = MinuteDown()
    credits: Annotated[tuple[CreditTier, ...], AfterValidator(_tiers)] = ()  # highest `below` first
    objective: percent(positive=True) | None = None  # unset: the highest tier's `below`

    @property
    def committed(self) -> float | None:
        if self.objective is not None:
            return self.objective
        return self.credits[0].below if self.credits else None

    def credit(self, uptime: float) -> CreditTier | None:
        """The tier an uptime (0..1) reaches: the lowest `below` it is under; None when none."""
        reached = [t for t in self.credits if uptime < t.below]
        return reached[-1] if reached else None


@spec
class MinuteOk:
    """When a minute meets the latency promise: its TPS at least N, or its TTFT at most T."""

    tps_at_least: number(0, 1e6, lo_open=True) | None = None
    ttft_at_most_s: seconds(3600.0) | None = alias("ttft_at_most", None)

    @property
    def metric(self) -> str:
        return "tps" if self.tps_at_least is not None else "ttft_ms"

    def ok(self, value: float) -> bool:
        if self.tps_at_least is not None:
            return value >= self.tps_at_least
        return value <= (self.ttft_at_most_s or 0.0) * 1000

    def words(self) -> str:
        if self.tps_at_least is not None:
            return f"TPS at least {self.tps_at_least:g} tokens/s"
        return f"TTFT at most {(self.ttft_at_most_s or 0) * 1000:g} ms"

    def _finish(self, ctx: LoadContext | None) -> list[dict]:
        if (self.tps_at_least is None) == (self.ttft_at_most_s is None):
            return [problem((), "give exactly one of tps_at_least or ttft_at_most")]
        return []


@spec
class LatencyTerms:
    minute_ok: MinuteOk
    objective: percent(positive=True) = 0.99  # of the measured minutes


def _match(value: Any) -> Any:
    if isinstance(value, Mapping):
        extra = [k for k in value if k not in CONTRACT_LABELS]
        if extra:
            fail(f"a contract matches by {' and '.join(CONTRACT_LABELS)} only, not {extra[0]!r}")
        bad = [k for k, v in value.items() if not isinstance(v, str) or not v.strip()]
        if bad:
            fail(f"{bad[0]}: expected a name, got {kind(value[bad[0]])}")
    return value


@spec
class Contract:
    name: Name | None = None  # unset: the provider's name, with the match's labels
    match: Annotated[Mapping[str, str], BeforeValidator(_match), AfterValidator(read_only)] = field(
        default_factory=empty, hash=False
    )
    uptime: UptimeTerms | None = None
    latency: LatencyTerms | None = None
    claim_days: number(1, 365, integer=True) = 30

    def label(self, provider: str) -> str:
        if self.name:
            return self.name
        parts = [provider] + [f"{k}={self.match[k]}" for k in CONTRACT_LABELS if k in self.match]
        return " ".join(parts)

    def covers(self, model: str, region: str) -> bool:
        return self.match.get("model", model) == model and self.match.get("region", region) == region

    def _finish(self, ctx: LoadContext | None) -> list[dict]:
        if self.uptime is None and self.latency is None:
            return [problem((), "a contract needs uptime, latency or both")]
        return []


def _one_or_list(value: Any, handler: Any) -> Any:
    """`contract:` is one mapping or a list of them; a single one's errors name no `[0]` the file lacks."""
    if not isinstance(value, Mapping):
        return handler(value)
    try:
        return handler([value])
    except ValidationError as exc:
        raise_all([{**e, "loc": tuple(e["loc"][1:])} for e in exc.errors()])


contract_list = WrapValidator(_one_or_list)


def contract_problems(contracts: tuple[Contract, ...], models: tuple[str, ...], regions) -> list[dict]:
    """What the schema can't check, within the provider's entry: a match naming a model or region the
    provider hasn't, two contracts under one name."""
    errors, seen = [], set()
    for n, contract in enumerate(contracts):
        at = ("contract", n) if len(contracts) > 1 else ("contract",)
        model, region = contract.match.get("model"), contract.match.get("region")
        if model is not None and model not in models:
            errors.append(problem((*at, "match", "model"), f"the provider has no model {model!r}"))
        if region is not None and region not in regions:
            errors.append(problem((*at, "match", "region"), f"the provider has no region {region!r}"))
        label = contract.label("")
        if label in seen:
            errors.append(problem((*at, "name"), "two contracts cover the same targets: give each a name"))
        seen.add(label)
    return errors


__all__ = [
    "SERVER_SIDE",
    "Contract",
    "CreditTier",
    "LatencyTerms",
    "MinuteDown",
    "MinuteOk",
    "UptimeTerms",
    "contract_list",
    "contract_problems",
]
