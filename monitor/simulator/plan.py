"""Turn a behaviour and a request into a schedule: pure, seeded, testable.

Every time is an offset in nanoseconds from the request's arrival, so the
server sleeps to absolute deadlines and a late wake-up never shifts the rest
of the stream (no drift). Chunk times are generated lazily: a burst of 200
requests must not spend milliseconds building schedules before any headers
go out.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from monitor.simulator.behaviour import ModelBehaviour

RANDOM_ERRORS = ("rate_limited", "server_error", "overloaded")
DEFAULT_SLOW_HEADERS_MS = 5000.0
DEFAULT_TRICKLE_GAP_MS = 1000.0


class Chunk(NamedTuple):
    offset_ns: int  # when to send, from arrival
    reasoning: bool
    tokens: int
    start: int  # index of its first token among the tokens of its kind


@dataclass(frozen=True, slots=True)
class StreamPlan:
    fault: str | None
    ttft_ns: int
    itl_ns: float  # per token, before jitter
    jitter: float
    tokens_per_chunk: int
    reasoning_tokens: int
    answer_tokens: int
    prompt_tokens: int
    finish: str  # "stop", or "length" when max_tokens cut the answer
    fault_after_tokens: int
    fault_delay_ns: int  # slow_headers: wait before headers; trickle: gap per byte
    seed: int  # for the inter-token jitter of this stream

    @property
    def output_tokens(self) -> int:
        return self.reasoning_tokens + self.answer_tokens

    def chunks(self) -> Iterator[Chunk]:
        """Reasoning chunks, then answer chunks; each chunk's gap is `itl_ns` per token in it."""
        rng = random.Random(self.seed) if self.jitter > 0 else None
        size = self.tokens_per_chunk
        offset = self.ttft_ns
        first = True
        for reasoning, total in ((True, self.reasoning_tokens), (False, self.answer_tokens)):
            for start in range(0, total, size):
                n = size if start + size <= total else total - start
                if not first:
                    gap = self.itl_ns * n
                    offset += round(gap * math.exp(rng.gauss(0.0, self.jitter)) if rng else gap)
                first = False
                yield Chunk(offset, reasoning, n, start)


def estimate_prompt_tokens(prompt_chars: int) -> int:
    return max(1, prompt_chars // 4)


def make_plan(
    b: ModelBehaviour,
    prompt_tokens: int,
    max_tokens: int | None,
    region: str | None,
    rng: random.Random,
    cached_tokens: int = 0,
) -> StreamPlan:
    """`cached_tokens` of the prompt come from the prompt cache: they are not prefilled."""
    fault = _pick_fault(b, rng)
    reasoning, answer = b.reasoning_tokens, b.output_tokens
    finish = "stop"
    if fault == "empty":
        reasoning = answer = 0
    if max_tokens is not None and max_tokens >= 0 and reasoning + answer > max_tokens:
        reasoning = min(reasoning, max_tokens)
        answer = max_tokens - reasoning
        finish = "length"

    prefilled = max(0, prompt_tokens - cached_tokens)
    ttft_ms = (b.ttft_ms + b.prefill_ms_per_1k_tokens * prefilled / 1000.0) * b.region_factor(region)
    if b.jitter > 0:
        # Lognormal around 1: the configured value is the median, the tail is
        # long on the slow side, as real latencies are.
        ttft_ms *= math.exp(rng.gauss(0.0, b.jitter))
    if b.spike_probability > 0 and rng.random() < b.spike_probability:
        ttft_ms *= b.spike_factor

    total = reasoning + answer
    after = b.fault_after_tokens if b.fault_after_tokens is not None else max(1, total // 2)
    default_delay = DEFAULT_TRICKLE_GAP_MS if fault == "trickle" else DEFAULT_SLOW_HEADERS_MS
    delay_ms = b.fault_delay_ms if b.fault_delay_ms is not None else default_delay
    return StreamPlan(
        fault=fault,
        ttft_ns=round(ttft_ms * 1e6),
        itl_ns=b.itl_ms * 1e6,
        jitter=b.jitter,
        tokens_per_chunk=b.tokens_per_chunk,
        reasoning_tokens=reasoning,
        answer_tokens=answer,
        prompt_tokens=prompt_tokens,
        finish=finish,
        fault_after_tokens=min(after, total),
        fault_delay_ns=round(delay_ms * 1e6),
        seed=rng.getrandbits(32) if b.jitter > 0 else 0,
    )


def _pick_fault(b: ModelBehaviour, rng: random.Random) -> str | None:
    if b.error_rate > 0 and rng.random() < b.error_rate:
        return rng.choice(RANDOM_ERRORS)
    if b.fault is not None and (b.fault_probability >= 1.0 or rng.random() < b.fault_probability):
        return b.fault
    return None
