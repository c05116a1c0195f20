"""Sample factories for the storage tests."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from monitor.sample import Sample

BASE_TIME = datetime(2025, 3, 14, 15, 9, 26, 535897, tzinfo=UTC)


def full_sample(**overrides) -> Sample:
    """A sample with every field set to a non-default value (round-trip tests)."""
    values = dict(
        target="openai/gpt-4o-mini@global:short",
        provider="openai",
        model="gpt-4o-mini",
        region="global",
        prompt="short",
        started_at=BASE_TIME,
        ok=False,
        error_kind="stream_error",
        error_message="overloaded: try again ünïcode ✓",
        ttfb_ms=101.25,
        ttft_ms=230.5,
        ttft_answer_ms=412.125,
        total_ms=1500.75,
        output_tokens=64,
        tokens_source="usage",
        input_tokens=17,
        reasoning_tokens=12,
        cache_read_tokens=3,
        cache_write_tokens=5,
        cache_state="warm",
        cache_hit=True,
        tps=81.5,
        chunks=63,
        itl_p50_ms=11.5,
        itl_max_ms=95.25,
        dns_ms=1.5,
        connect_ms=2.25,
        tls_ms=7.75,
        connection_reused=False,
        http_status=200,
        request_id="req_abc123",
        model_version="gpt-4o-mini-2024-07-18",
        server_timing={"prompt_eval_ms": 12.5, "nested": {"a": [1, 2, 3]}, "flag": True},
        sched_lag_ms=0.75,
        agent="eu-west",
    )
    values.update(overrides)
    return Sample(**values)


def make_samples(
    n: int,
    *,
    start: datetime = BASE_TIME,
    step_s: float = 1.0,
    targets: int = 3,
    agent: str = "local",
    seed: int = 1,
) -> list[Sample]:
    """`n` realistic samples, lognormal latencies, ~5% errors, in time order."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        t = i % targets
        ok = rng.random() > 0.05
        ttft = rng.lognormvariate(5.5, 0.6)
        out.append(
            Sample(
                target=f"prov{t}/model-{t}@region:short",
                provider=f"prov{t}",
                model=f"model-{t}",
                region="region",
                prompt="short",
                started_at=start + timedelta(seconds=i * step_s),
                ok=ok,
                error_kind=None if ok else rng.choice(["timeout", "server_error", "rate_limited"]),
                ttft_ms=ttft if ok else None,
                ttft_answer_ms=ttft * 1.1 if ok else None,
                total_ms=ttft + rng.lognormvariate(7, 0.3) if ok else None,
                tps=rng.lognormvariate(4.3, 0.4) if ok else None,
                output_tokens=64 if ok else None,
                input_tokens=17,
                chunks=60 if ok else 0,
                agent=agent,
            )
        )
    return out
