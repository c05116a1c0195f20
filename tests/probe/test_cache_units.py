"""Prompt caching, the pure parts (DESIGN §13): request shapes with the cache marker, the
round's nonces, cost with cache prices, the hit verdict, config rules and the hit-ratio detector."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from monitor.alerts.detectors.cache import watches
from monitor.alerts.detectors.detect import SeriesDetector, settings_from_rule
from monitor.config.schema import Price
from monitor.probe.cache_minimum import min_cache_tokens
from monitor.probe.cache_pair import cache_hit
from monitor.probe.runner import with_cache_tail, with_nonce
from monitor.protocols import get_protocol
from monitor.protocols.base import Message, ProbeRequest
from monitor.sample import Sample
from tests.config_helpers import errors, load, minimal

PREFIX = "Long stable document. " * 50


def cache_request(protocol: str) -> ProbeRequest:
    messages = with_cache_tail(with_nonce((Message("system", "Be brief."), Message("user", PREFIX)), "r0und"), "t41l")
    return ProbeRequest(base_url="https://h", model="m", messages=messages, max_tokens=8, api_key="k")


def test_the_round_nonce_opens_the_prefix_and_a_fresh_one_follows_it():
    system, user = cache_request("openai-chat").messages
    assert system.content.startswith("[r0und] ") and system.cache_prefix_chars == 0
    prefix, rest = user.cache_split()
    assert prefix == PREFIX and rest == "\n\n[t41l]"


def test_anthropic_marks_the_prefix_with_cache_control():
    body = json.loads(get_protocol("anthropic").build_request(cache_request("anthropic")).body)
    assert body["system"] == "[r0und] Be brief."
    (message,) = body["messages"]
    assert message["content"] == [
        {"type": "text", "text": PREFIX, "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "\n\n[t41l]"},
    ]


def test_bedrock_puts_a_cache_point_after_the_prefix():
    body = json.loads(get_protocol("bedrock-converse").build_request(cache_request("bedrock-converse")).body)
    (message,) = body["messages"]
    assert message["content"] == [{"text": PREFIX}, {"cachePoint": {"type": "default"}}, {"text": "\n\n[t41l]"}]


@pytest.mark.parametrize("protocol", ["openai-chat", "openai-responses", "gemini", "ollama", "azure-openai"])
def test_automatic_caches_get_the_text_whole(protocol):
    raw = (
        get_protocol(protocol)
        .build_request(
            replace(
                cache_request(protocol), options={"api_version": "2024-10-21"} if protocol == "azure-openai" else {}
            )
        )
        .body
    )
    assert PREFIX.strip() in raw.decode() and "cache_control" not in raw.decode() and "cachePoint" not in raw.decode()


def test_cost_prices_reads_and_writes_apart():
    price = Price(input=3.0, output=15.0, cached_input=0.3, cache_write=3.75)
    # 2,000 prompt tokens: 1,000 read, 500 written, 500 plain; 100 out
    assert price.cost_usd(2000, 100, 1000, 500) == pytest.approx((500 * 3 + 1000 * 0.3 + 500 * 3.75 + 100 * 15) / 1e6)
    assert Price(input=3.0, output=15.0).cost_usd(2000, 100, 1000, 500) == pytest.approx((2000 * 3 + 100 * 15) / 1e6)


def sample(**kw) -> Sample:
    base = dict(target="p/m@r:q", provider="p", model="m", region="r", prompt="q", started_at=datetime.now(UTC),
                ok=True, ttft_ms=100.0)  # fmt: skip
    return Sample(**(base | kw))


def test_hit_is_what_the_response_states_else_an_evident_saving():
    cold = sample(ttft_ms=1000.0, cache_state="cold")
    assert cache_hit(cold, sample(ttft_ms=900.0, cache_read_tokens=1024)) is True  # stated: a hit, however slow
    assert cache_hit(cold, sample(ttft_ms=100.0, cache_read_tokens=0)) is False  # stated: a miss
    assert cache_hit(cold, sample(ttft_ms=300.0)) is True  # Ollama: says nothing, 70 % faster
    assert cache_hit(cold, sample(ttft_ms=900.0)) is False
    assert cache_hit(cold, sample(ok=False, error_kind="timeout", ttft_ms=None)) is None


def test_minimums_per_provider():
    assert min_cache_tokens("openai-chat", "gpt-4o-mini") == 1024
    assert min_cache_tokens("anthropic", "claude-sonnet-4-5") == 1024
    assert min_cache_tokens("anthropic", "claude-3-5-haiku-latest") == 2048
    assert min_cache_tokens("anthropic", "claude-haiku-4-5") == 4096
    assert min_cache_tokens("bedrock-converse", "anthropic.claude-3-5-haiku-20241022-v1:0") == 2048
    assert min_cache_tokens("bedrock-converse", "us.amazon.nova-micro-v1:0") == 1000
    assert min_cache_tokens("gemini", "gemini-2.5-pro") == 4096
    assert min_cache_tokens("ollama", "llama3.2") is None


def _rule(**fields) -> dict:
    return {"name": "c", "metric": "cache_hit_ratio", "kind": "threshold", "below": "50%", **fields}


def test_cache_rules_load_and_refuse_what_makes_no_sense():
    (rule,) = load(minimal(alerts=[_rule()])).alerts
    assert rule.below == 0.5 and rule.percentile is None
    (warm,) = load(
        minimal(alerts=[{"name": "w", "metric": "ttft_ms", "kind": "regression", "cache_state": "warm"}])
    ).alerts
    assert warm.cache_state == "warm"
    assert any("kind: threshold" in e for e in errors(minimal(alerts=[_rule(kind="regression", below=None)])))
    assert any("percentile" in e for e in errors(minimal(alerts=[_rule(percentile=90)])))
    assert any("cache_state" in e for e in errors(minimal(alerts=[_rule(cache_state="cold")])))
    assert any(
        "cache_state" in e for e in errors(minimal(alerts=[{**_rule(), "metric": "ttft_ms", "cache_state": "hot"}]))
    )


def test_which_half_each_rule_watches():
    def settings(**rule):
        base = dict(metric="ttft_ms", kind="regression", min_change=None, percentile=None, above=None, below=None,
                    window_s=900, min_samples=5, for_evaluations=2, resolve_after=3, baseline_window_s=None,
                    cache_state=None)  # fmt: skip
        return settings_from_rule(type("Rule", (), base | rule))

    plain = settings()
    assert watches(plain, None) and watches(plain, "cold") and not watches(plain, "warm")
    warm = settings(cache_state="warm")
    assert watches(warm, "warm") and not watches(warm, "cold") and not watches(warm, None)
    errors_ = settings(metric="error_rate", kind="threshold", above=0.2)
    assert all(watches(errors_, s) for s in (None, "cold", "warm"))
    ratio = settings(metric="cache_hit_ratio", kind="threshold", below=0.5)
    assert watches(ratio, "warm") and not watches(ratio, "cold") and not watches(ratio, None)


def test_hit_ratio_threshold_fires_below_and_resolves_with_margin():
    rule = dict(metric="cache_hit_ratio", kind="threshold", min_change=None, percentile=None, above=None, below=0.5,
                window_s=600, min_samples=4, for_evaluations=2, resolve_after=2, baseline_window_s=None)  # fmt: skip
    det = SeriesDetector(settings_from_rule(type("Rule", (), rule)))
    t = 1_780_000_000.0
    evs = [det.observe(t + 60 * i, 1.0) for i in range(6)]  # hits: quiet
    assert not any(e.alarm_started for e in evs) and evs[-1].value == 1.0
    assert not det.observe(t + 400, None).evaluated  # a failed warm probe is not judged
    evs = [det.observe(t + 420 + 60 * i, 0.0) for i in range(10)]  # the cache stopped hitting
    assert sum(e.alarm_started for e in evs) == 1 and det.state == "firing"
    assert min(e.value for e in evs if e.evaluated) == 0.0
    evs = [det.observe(t + 1100 + 60 * i, 1.0) for i in range(12)]
    assert sum(e.resolved for e in evs) == 1 and det.state == "ok"


def test_anthropic_usage_survives_odd_iterations():
    from monitor.protocols.anthropic import _usage

    base = {"input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 3}
    for odd in (7, "x", {"a": 1}, [1, "y"], None):
        got = _usage({**base, "iterations": odd}, with_output=True)
        assert (got.input_tokens, got.cache_read_tokens, got.cache_write_tokens) == (15, 5, None)
