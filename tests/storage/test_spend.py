"""Spend so far (Overview, routes): rollup cost per provider, cost per 1,000 probes per target."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from monitor.storage.queries import insert_samples
from monitor.storage.queries.spend import cost_per_1k_probes, month_start, spend_by_provider
from monitor.storage.rollups import rollup_hours

from .factories import full_sample

START = datetime(2026, 3, 2, 10, tzinfo=UTC)


def test_spend_per_provider_and_cost_per_1k_probes(engine) -> None:
    def sample(target: str, minutes: int, cost: float | None, **kw):
        provider, rest = target.split("/", 1)
        model, rest = rest.split("@")
        region, prompt = rest.split(":")
        return full_sample(
            target=target, provider=provider, model=model, region=region, prompt=prompt,
            started_at=START + timedelta(minutes=minutes), cost_usd=cost, **kw,
        )  # fmt: skip

    insert_samples(
        engine,
        [
            sample("openai/m@g:q", 1, 0.002),
            sample("openai/m@g:q", 2, 0.004, ok=False, error_kind="assertion", failed_check="contains"),
            sample("openai/n@g:q", 70, 0.010),
            sample("local/x@g:q", 3, None),  # not priced: no cost, not a cost of zero
        ],
    )
    rollup_hours(engine, START, START + timedelta(hours=2))
    spend = {s.provider: s for s in spend_by_provider(engine, month_start(START))}
    assert set(spend) == {"openai"}
    assert abs(spend["openai"].cost_usd - 0.016) < 1e-9 and spend["openai"].probes == 3
    assert spend_by_provider(engine, START + timedelta(hours=1))[0].cost_usd == 0.010
    per_1k = cost_per_1k_probes(engine, START)
    assert set(per_1k) == {"openai/m@g:q", "openai/n@g:q"}
    assert abs(per_1k["openai/m@g:q"] - 3.0) < 1e-9  # mean $0.003 a probe
    assert cost_per_1k_probes(engine, START, START + timedelta(minutes=2)) == {"openai/m@g:q": 2.0}
