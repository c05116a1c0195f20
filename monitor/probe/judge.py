"""What happens to an answer once its stream ended cleanly: checks, fingerprint, cost. Pure.

Run after the timed part of a probe, so nothing here can delay a read or a timestamp.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from monitor.probe.checks import CheckFailure, evaluate
from monitor.probe.fingerprint import answer_fingerprint
from monitor.probe.measure import Answer
from monitor.sample import Sample


@dataclass(frozen=True, slots=True)
class AnswerRules:
    """What happens to an answer after a clean stream: checks, fingerprint, cost."""

    expect: Any = None  # config Expect
    fingerprint: bool = False  # temperature-0 prompts (monitor.probe.fingerprint says why)
    price: Any = None  # config Price: cost_usd

    @property
    def needs_answer(self) -> bool:
        return self.expect is not None or self.fingerprint

    @classmethod
    def for_target(cls, target, price=None) -> AnswerRules:
        prompt = target.prompt_spec
        return cls(prompt.expect, prompt.temperature == 0, price)


def judge(sample: Sample, answer: Callable[[], Answer], rules: AnswerRules) -> tuple[dict, CheckFailure | None]:
    """(fields to set on the sample, the failed check or None). `answer` is called only when needed."""
    fields: dict[str, Any] = {}
    if rules.price is not None and (sample.input_tokens is not None or sample.output_tokens):
        fields["cost_usd"] = rules.price.cost_usd(
            sample.input_tokens, sample.output_tokens, sample.cache_read_tokens, sample.cache_write_tokens
        )
    if not sample.ok or not rules.needs_answer:
        return fields, None
    got = answer()
    if rules.fingerprint:
        fields["answer_fingerprint"] = answer_fingerprint(got)
    return fields, evaluate(rules.expect, got, sample.output_tokens, sample.reasoning_tokens)
