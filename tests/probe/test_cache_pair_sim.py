"""Cache probes (DESIGN §13) through every protocol, against the simulator's prefix caches.

A `cache: true` prompt is probed as a cold/warm pair: the cold request opens its stable prefix
with a nonce new this round (nothing to reuse), the warm one sends the same prefix again. The
simulator prefills only what its cache does not hold and reports reads and writes in each
protocol's own usage shape, which the probe parses back into cache_read_tokens/cache_write_tokens.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from monitor.config import load_config_text
from monitor.eventloop import run_async
from monitor.probe.cache_pair import probe_round
from monitor.probe.runner import probe_target
from monitor.probe.transport.lanes import ClientLanes, warm_up
from tests.conftest import BASE_PATH

PROTOCOLS = ("openai-chat", "openai-responses", "azure-openai", "anthropic", "gemini", "bedrock-converse", "ollama")
# 300 ms per 1,000 prefilled tokens: a ~1,500-token prefix costs ~450 ms cold and nothing warm.
MODEL = "sim:ttft=20:itl=1:tokens=8:prefill=300:jitter=0"
LONG = {"synthetic": {"tokens": 1500, "seed": 7}, "max_tokens": 16}
# Reads and writes as each protocol states them: (cold read, cold write, warm write); None: unstated.
STATED = {
    "openai-chat": (0, None, None),
    "openai-responses": (0, None, None),
    "azure-openai": (0, None, None),
    "anthropic": (0, "prefix", 0),
    "gemini": (None, None, None),
    "bedrock-converse": (0, "prefix", 0),
    "ollama": (None, None, None),
}


def _config(simulator, prompts: dict, cache_bust: bool = True) -> str:
    providers = {
        p.replace("-", "_"): {
            "protocol": p,
            "api_key": "sk-test-key",
            "regions": {"local": simulator.base_url + BASE_PATH[p]},
            "models": [MODEL],
            "cache_bust": cache_bust,
        }
        for p in PROTOCOLS
    }
    checks = [{"providers": sorted(providers), "prompts": sorted(prompts), "ttft_timeout": "5s", "timeout": "10s"}]
    return json.dumps({"providers": providers, "prompts": prompts, "checks": checks})


def _rounds(targets, fn) -> list:
    async def main():
        await warm_up()
        async with ClientLanes() as lanes:

            async def one(target):
                async with lanes.lane(target.base_url) as client:
                    return await fn(client, target)

            return await asyncio.gather(*(one(t) for t in targets))

    return run_async(main())


@pytest.fixture(scope="module")
def pairs(simulator, tmp_path_factory) -> dict:
    config = load_config_text(
        _config(simulator, {"cached": {**LONG, "cache": True}}), base_dir=tmp_path_factory.mktemp("c"), env={}
    )
    targets = list(config.targets)
    out = _rounds(targets, probe_round)
    return {t.protocol: pair for t, pair in zip(targets, out, strict=True)}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_cold_then_warm_pair_and_the_saving(pairs, simulator, protocol: str) -> None:
    cold, warm = pairs[protocol]
    assert (cold.cache_state, warm.cache_state) == ("cold", "warm")
    assert cold.ok and warm.ok, (cold.error_message, warm.error_message)
    # ~450 ms of prefill saved: the warm probe skipped the prefix's prefill.
    assert cold.ttft_ms - warm.ttft_ms > 250, (cold.ttft_ms, warm.ttft_ms)
    # input_tokens is the whole prompt whatever the protocol's split (Ollama counts only what it evaluated):
    # exactly what the simulator tokenized. Not cold against warm: each ends in its own random nonce, and
    # its tail of 8 hex characters is 5 to 11 tokens (4 apart failed a tolerance of 3).
    if protocol != "ollama":
        for half in (cold, warm):
            assert half.input_tokens == simulator.truth(half.request_id)["prompt_tokens"], protocol
        assert cold.input_tokens > 1400


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_each_protocol_states_reads_and_writes_in_its_shape(pairs, protocol: str) -> None:
    cold, warm = pairs[protocol]
    cold_read, cold_write, warm_write = STATED[protocol]
    assert cold.cache_read_tokens == cold_read
    if cold_write == "prefix":
        assert cold.cache_write_tokens > 1400
    else:
        assert cold.cache_write_tokens == cold_write
    assert warm.cache_write_tokens == warm_write
    if protocol == "ollama":
        assert warm.cache_read_tokens is None  # Ollama says nothing; only the TTFT shows the hit
    else:
        assert 1400 < warm.cache_read_tokens <= warm.input_tokens


def test_pair_requests_share_the_prefix_and_differ_after_it(pairs, simulator) -> None:
    cold, warm = pairs["openai-chat"]
    cold_truth, warm_truth = simulator.truth(cold.request_id), simulator.truth(warm.request_id)
    assert cold_truth["body_sha256"] != warm_truth["body_sha256"]  # never the same whole request


def test_a_new_round_is_cold_again(pairs, simulator, tmp_path) -> None:
    config = load_config_text(_config(simulator, {"cached": {**LONG, "cache": True}}), base_dir=tmp_path, env={})
    target = next(t for t in config.targets if t.protocol == "openai-chat")
    ((cold, warm),) = _rounds([target], probe_round)
    assert cold.cache_read_tokens == 0 and warm.cache_read_tokens > 1400


def test_automatic_caches_only_above_the_minimum_and_anthropic_only_when_marked(simulator, tmp_path) -> None:
    """Without `cache: true` and without the nonce, the same prompt twice: OpenAI's automatic
    cache hits above 1,024 tokens and not below; Anthropic's never, nothing being marked."""
    prompts = {"long": dict(LONG), "short": {"messages": [{"role": "user", "content": "Hi there."}], "max_tokens": 8}}
    config = load_config_text(_config(simulator, prompts, cache_bust=False), base_dir=tmp_path, env={})
    targets = [t for t in config.targets if t.protocol in ("openai-chat", "anthropic")]
    first = _rounds(targets, lambda c, t: probe_target(c, t))
    second = _rounds(targets, lambda c, t: probe_target(c, t))
    got = {(t.protocol, t.prompt): (a, b) for t, a, b in zip(targets, first, second, strict=True)}
    assert got[("openai-chat", "long")][1].cache_read_tokens > 1000
    assert got[("openai-chat", "short")][1].cache_read_tokens == 0
    assert got[("anthropic", "long")][1].cache_read_tokens == 0
    assert all(s.cache_state is None for pair in got.values() for s in pair)
