"""The `slos:` section (DESIGN §12): what a good probe is for a set of routes, and how much bad a period may hold.

    slos:
      - name: chat-interactive
        match: {provider: openai, prompt: short}
        objective: 99.5%
        good: {ttft_ms: {below: 1500ms}}
        period: 30d
        per: target

A probe is good when it is ok and meets every bound of `good:`; with `checks: false` a probe that
failed only its prompt's `expect:` answer checks is judged by its bounds alone.
"""

from __future__ import annotations

from dataclasses import field
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, WithJsonSchema

from monitor.config.errors import fail, kind, problem
from monitor.config.fields import Bool, LoadContext, Name, Url, alias, empty, seconds, spec
from monitor.config.selectors import Scope, scope_matches
from monitor.units import DAY_S, HOUR_S, parse_duration, parse_percent

PER = ("target", "provider", "model", "all")
BOUND_METRICS = ("ttft_ms", "ttft_answer_ms", "total_ms", "tps")
MAX_LATENCY_MS = 24 * 3600 * 1000
DEFAULT_PERIOD_S = 30 * DAY_S


def _level(value: Any, *, latency: bool) -> float:
    if isinstance(value, str) and latency:
        try:
            value = parse_duration(value) * 1000
        except ValueError:
            fail("expected milliseconds or a duration like 1500ms or 1.5s, got {got}")
    if isinstance(value, bool) or not isinstance(value, int | float):
        fail(f"expected a number, got {kind(value)}")
    top = MAX_LATENCY_MS if latency else 1e6
    if not 0 < value <= top:
        fail(f"must be greater than 0 and at most {top:,.0f}")
    return float(value)


LatencyLevel = Annotated[
    float,
    BeforeValidator(lambda v: _level(v, latency=True)),
    WithJsonSchema({"type": ["number", "string"], "examples": [1500, "1.5s"]}),
]
RateLevel = Annotated[float, BeforeValidator(lambda v: _level(v, latency=False)), WithJsonSchema({"type": "number"})]


def _one_side(below: float | None, above: float | None) -> list[dict]:
    return [problem((), "give exactly one of below or above")] if (below is None) == (above is None) else []


@spec
class LatencyBound:
    below: LatencyLevel | None = None  # ms, or a duration like 1.5s
    above: LatencyLevel | None = None

    def _finish(self, ctx: LoadContext | None) -> list[dict]:
        return _one_side(self.below, self.above)


@spec
class RateBound:
    below: RateLevel | None = None  # tokens/s
    above: RateLevel | None = None

    def _finish(self, ctx: LoadContext | None) -> list[dict]:
        return _one_side(self.below, self.above)


@spec
class Good:
    """Bounds a good probe meets (ms for latencies, tokens/s for tps); a bound is strict (`below: 1500ms`
    makes 1500 ms bad)."""

    ttft_ms: LatencyBound | None = None
    ttft_answer_ms: LatencyBound | None = None
    total_ms: LatencyBound | None = None
    tps: RateBound | None = None
    checks: Bool = True  # false: failing the prompt's `expect:` checks alone does not make a probe bad

    def bounds(self) -> tuple[tuple[str, float | None, float | None], ...]:
        """(metric, below, above) for every bound given."""
        out = []
        for metric in BOUND_METRICS:
            bound = getattr(self, metric)
            if bound is not None:
                out.append((metric, bound.below, bound.above))
        return tuple(out)


def _objective(value: Any) -> float:
    try:
        fraction = parse_percent(value)
    except ValueError as exc:
        fail(f"{exc}, got {{got}}")
    if not 0 < fraction < 1:
        fail("must be above 0% and below 100% (100% leaves no error budget)")
    return fraction


Objective = Annotated[
    float, BeforeValidator(_objective), WithJsonSchema({"type": ["string", "number"], "examples": ["99.5%", 0.995]})
]


@spec
class Slo:
    name: Name
    objective: Objective
    match: Scope = field(default_factory=empty, hash=False)  # the alert rules' selectors; empty: every target
    good: Good = Good()
    period_s: seconds(400 * DAY_S, min_s=HOUR_S - 1) = alias("period", DEFAULT_PERIOD_S)
    per: Literal["target", "provider", "model", "all"] = "target"
    repeat_interval_s: seconds(30 * DAY_S) = alias("repeat_interval", 4 * HOUR_S)  # as an alert rule's (DESIGN §15)
    runbook: Url | None = None  # DESIGN §18: what on-call should do, linked from every notification

    def matches(self, provider: str | None, model=None, region=None, prompt=None) -> bool:
        return scope_matches(self.match, provider=provider, model=model, region=region, prompt=prompt)

    @property
    def error_budget(self) -> float:
        """The share of probes the period may hold bad."""
        return 1.0 - self.objective
