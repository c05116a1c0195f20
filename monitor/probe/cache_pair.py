"""A probing round of one target: one probe, or a cache probe's cold/warm pair (DESIGN §13).

A prompt with `cache: true` is sent twice a round, one request after the other on the same
client: first cold, its stable prefix opened by a nonce new this round, so the provider's
cache holds nothing to reuse (and is primed by it); then warm, the same prefix again with only
the nonce after it changed. The warm probe's TTFT against the cold one is what the cache saves,
and its `cache_read_tokens` whether it hit. A cold probe that failed primed nothing: its warm
half is not sent, so a warm sample always had a primed prefix before it.
"""

from __future__ import annotations

import secrets as _random
from dataclasses import replace

from monitor.probe.runner import probe_target
from monitor.sample import Sample

COLD = "cold"
WARM = "warm"
# Where a response states no cache counts (Ollama, a llama.cpp without timings), a warm probe
# at least this much faster than its cold one hit: prefill of a ~1,000-token prefix is most of
# a cold TTFT, while jitter between two back-to-back probes is a few percent.
EVIDENT_SAVING = 0.25


def is_cache_probe(target) -> bool:
    return bool(getattr(target.prompt_spec, "cache", False))


async def probe_round(client, target, **kwargs) -> tuple[Sample, ...]:
    """The samples of one round: `(sample,)`, or `(cold, warm)` for a cache probe (`(cold,)`
    when the cold one failed). `kwargs` are probe_target's."""
    if not is_cache_probe(target):
        return (await probe_target(client, target, **kwargs),)
    round_nonce = _random.token_hex(4)
    cold = await probe_target(client, target, cache_state=COLD, cache_nonce=round_nonce, **kwargs)
    if not cold.ok:
        return (cold,)
    # The warm half was not late against the schedule: it waited for the cold one on purpose.
    warm_kwargs = {**kwargs, "sched_lag_ms": 0.0 if kwargs.get("sched_lag_ms") is not None else None}
    warm = await probe_target(client, target, cache_state=WARM, cache_nonce=round_nonce, **warm_kwargs)
    return (cold, replace(warm, cache_hit=cache_hit(cold, warm)))


def cache_hit(cold: Sample, warm: Sample) -> bool | None:
    """Did the warm probe hit? What its response states (read tokens), else whether its TTFT
    shows the saving (at least EVIDENT_SAVING under the cold probe's); None when it failed."""
    if not warm.ok:
        return None
    if warm.cache_read_tokens is not None:
        return warm.cache_read_tokens > 0
    if cold.ttft_ms is None or warm.ttft_ms is None:
        return None
    return warm.ttft_ms <= cold.ttft_ms * (1 - EVIDENT_SAVING)
