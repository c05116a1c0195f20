"""`inhibit:` (DESIGN §15): while an alert matching `source` fires, alerts matching `target` whose scope
labels in `equal` are the same are inhibited: kept, shown, delivered nowhere. Alertmanager's shape.

    inhibit:
      - name: errors-over-latency
        source: {metric: error_rate, severity: page}
        target: {metric: [ttft_ms, ttft_answer_ms, total_ms, tps]}
        equal: [provider, region]

Unset, the shipped default below applies; `inhibit: []` turns inhibition between rules off.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BeforeValidator, WithJsonSchema

from monitor.config.errors import problem
from monitor.config.fields import LoadContext, Name, Names, spec

MATCH_KEYS = ("rule", "slo", "metric", "kind", "severity")
EQUAL_LABELS = ("provider", "model", "region", "prompt", "agent")
LATENCY_AND_SPEED = ("ttft_ms", "ttft_answer_ms", "total_ms", "tps")


def _listed(value: Any) -> Any:
    return (value,) if isinstance(value, str) else value


OneOrMore = Annotated[
    Names,
    BeforeValidator(_listed),
    WithJsonSchema({"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}),
]


@spec
class AlertMatch:
    """Matchers on an alert: each given key must hold one of its values. `kind` is regression, threshold,
    change or slo; an SLO alert's `metric` is every metric its `good:` bounds (error_rate when none)."""

    rule: OneOrMore = ()
    slo: OneOrMore = ()
    metric: OneOrMore = ()
    kind: OneOrMore = ()
    severity: OneOrMore = ()

    def matches(self, labels: Mapping[str, Any]) -> bool:
        for key in MATCH_KEYS:
            wanted = getattr(self, key)
            if not wanted:
                continue
            have = labels.get(key)
            values = have if isinstance(have, tuple | list | frozenset | set) else (have,)
            if not any(v in wanted for v in values):
                return False
        return True

    def _finish(self, ctx: LoadContext | None) -> list[dict]:
        if not any(getattr(self, k) for k in MATCH_KEYS):
            return [problem((), f"name at least one of {', '.join(MATCH_KEYS)}: an empty matcher matches every alert")]
        return []


@spec
class InhibitRule:
    name: Name
    source: AlertMatch
    target: AlertMatch
    equal: Names = ()

    def _finish(self, ctx: LoadContext | None) -> list[dict]:
        bad = [label for label in self.equal if label not in EQUAL_LABELS]
        return [problem(("equal",), f"unknown label {b!r}; expected one of {', '.join(EQUAL_LABELS)}") for b in bad]


# The shipped default: a provider that errors is not also paged for being slow (its failed probes are
# out of the latency series, and what is left is its struggling remainder).
DEFAULT_INHIBIT = (
    InhibitRule(
        name="errors-over-latency",
        source=AlertMatch(metric=("error_rate",), severity=("page",)),
        target=AlertMatch(metric=LATENCY_AND_SPEED),
        equal=("provider", "region"),
    ),
)
