"""The ranking core and the gateway formats, on plain values."""

from __future__ import annotations

import pytest

from monitor.routing.formats import litellm_model_list, openrouter_blocks, route_object
from monitor.routing.params import RouteParamError, parse_floor, parse_window
from monitor.routing.rank import RouteStats, rank_routes


def route(provider, ttft, ok=100, samples=100, tps=50.0, cost=0.0, model="llama", prompt="short", region="r"):
    return RouteStats(
        target=f"{provider}/{model}@{region}:{prompt}", provider=provider, model=f"{provider}-id",
        canonical_model=model, region=region, prompt=prompt, samples=samples, ok=ok, ttft_p50_ms=ttft,
        tps_p50=tps, cost_usd_sum=cost * samples, cost_samples=samples if cost else 0,
    )  # fmt: skip


def order(ranked):
    return [r.stats.provider for r in ranked]


def test_routes_above_the_floor_first_by_ttft_then_the_rest_most_available_first():
    routes = [route("slow", 300), route("fast-broken", 50, ok=60), route("mid", 200), route("flaky", 80, ok=95)]
    ranked = rank_routes(routes, 0.99)
    assert order(ranked) == ["mid", "slow", "flaky", "fast-broken"]
    assert [r.rank for r in ranked] == [1, 2, 3, 4]
    assert [r.eligible for r in ranked] == [True, True, False, False]


def test_by_tps_and_cost_and_missing_values_last():
    routes = [route("a", 100, tps=40, cost=0.003), route("b", 200, tps=90, cost=0.001), route("c", None, tps=None)]
    assert order(rank_routes(routes, 0.9, "tps")) == ["b", "a", "c"]
    assert order(rank_routes(routes, 0.9, "cost")) == ["b", "a", "c"]
    assert order(rank_routes(routes, 0.9)) == ["a", "b", "c"]
    with pytest.raises(ValueError):
        rank_routes(routes, 0.9, "vibes")


def test_groups_by_canonical_model_and_prompt():
    routes = [route("a", 100), route("b", 50), route("a", 10, prompt="long"), route("x", 1, model="other")]
    ranked = rank_routes(routes)
    assert [(r.model, r.prompt, r.rank, r.stats.provider) for r in ranked] == [
        ("llama", "long", 1, "a"), ("llama", "short", 1, "b"), ("llama", "short", 2, "a"), ("other", "short", 1, "x"),
    ]  # fmt: skip


def test_formats():
    ranked = rank_routes([route("groq", 100), route("together", 150), route("broken", 10, ok=1)])
    assert route_object(ranked[0])["ttft_ms"] == {"p50": 100.0, "p90": None, "p99": None}
    assert openrouter_blocks(ranked) == [
        {"model": "llama", "prompt": "short", "provider": {"order": ["groq", "together"], "ignore": ["broken"]}}
    ]
    entries = litellm_model_list(ranked)["model_list"]
    assert [(e["litellm_params"]["model"], e["litellm_params"]["order"]) for e in entries] == [
        ("groq/groq-id", 1), ("together/together-id", 2),
    ]  # fmt: skip


def test_params():
    assert parse_floor("99%") == pytest.approx(0.99) and parse_floor("0.5") == 0.5
    assert parse_window("30m").total_seconds() == 1800
    for bad in ("150%", "abc"):
        with pytest.raises(RouteParamError):
            parse_floor(bad)
    with pytest.raises(RouteParamError):
        parse_window("0s")
