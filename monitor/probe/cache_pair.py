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

from monitor.probe.runner import probe_target
from monitor.sample import Sample

COLD = "cold"
WARM = "warm"


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
    return (cold, warm)
