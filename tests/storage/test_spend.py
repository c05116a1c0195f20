"""Spend so far (Overview, routes): rollup cost per provider, cost per 1,000 probes per target."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from monitor.storage.queries import insert_samples
from monitor.storage.queries.spend import cost_per_1k_probes, month_start, recorded_cost_by_target, spend_by_provider
from monitor.storage.rollups import rollup_hours

from .factories import full_sample

START = datetime(2026, 3, 2, 10, tzinfo=UTC)


def sample(target: str, minutes: int, cost: float | None, **kw):
    """A sample of `provider/model@region:prompt`, `minutes` after START, that cost `cost`."""
    provider, rest = target.split("/", 1)
    model, rest = rest.split("@")
    region, prompt = rest.split(":")
    return full_sample(
        target=target, provider=provider, model=model, region=region, prompt=prompt,
        started_at=START + timedelta(minutes=minutes), cost_usd=cost, **kw,
    )  # fmt: skip


def test_spend_per_provider_and_cost_per_1k_probes(engine) -> None:
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


def test_recorded_cost_by_target_reads_what_each_probe_cost_from_the_rollups(engine) -> None:
    insert_samples(
        engine,
        [
            # A probe whose input was served from cache cost less than prices × mean tokens would say.
            sample("openai/m@g:q", 1, 0.001, cache_read_tokens=900, input_tokens=1000),
            sample("openai/m@g:q", 2, 0.005, input_tokens=1000),
            sample("openai/m@eu:q", 61, 0.003),
            sample("local/x@g:q", 3, None),
        ],
    )
    rollup_hours(engine, START, START + timedelta(hours=2))
    ids = ["openai/m@g:q", "openai/m@eu:q", "local/x@g:q"]
    cost = recorded_cost_by_target(engine, ids, START + timedelta(minutes=30))  # from the start of that hour
    assert set(cost) == {"openai/m@g:q", "openai/m@eu:q"}  # unpriced: absent, not $0
    assert cost["openai/m@g:q"].probes == 2 and abs(cost["openai/m@g:q"].per_1k_probes_usd - 3.0) < 1e-9
    assert set(recorded_cost_by_target(engine, ids, START + timedelta(hours=1))) == {"openai/m@eu:q"}
    assert recorded_cost_by_target(engine, ["openai/m@eu:q"], START, START + timedelta(hours=1)) == {}


def test_cost_per_1k_by_model_pools_regions_by_their_probes() -> None:
    from types import SimpleNamespace

    from monitor.storage.queries.spend import RecordedCost, cost_per_1k_by_model

    def ref(target):
        provider, rest = target.split("/", 1)
        return SimpleNamespace(id=target, provider=provider, model=rest.split("@")[0])

    recorded = {"o/m@us:q": RecordedCost(0.003, 1), "o/m@eu:q": RecordedCost(0.003, 3)}
    pooled = cost_per_1k_by_model(recorded, [ref("o/m@us:q"), ref("o/m@eu:q"), ref("l/x@us:q")])
    assert pooled == {"o/m": 1.5}  # $0.006 over 4 probes, not the mean of $3 and $1
