"""Synthetic long-context prompts: deterministic prose of a given o200k token count,
measured where it counts, at the (simulated) provider's usage."""

from __future__ import annotations

import json

import pytest

from monitor.config import load_config_text
from monitor.probe.runner import probe_request
from monitor.probe.synthetic import filler
from monitor.probe.tokens import count_o200k
from tests.conftest import BASE_PATH
from tests.probe.test_runner import probe_all

SIZES = (1_000, 8_000, 32_000)


def test_filler_is_deterministic_prose() -> None:
    assert filler(500, 1) == filler(500, 1)
    assert filler(500, 1) != filler(500, 2)
    text = filler(2_000, 7)
    words = text.split()
    assert len(set(words)) > 100  # not one word repeated
    assert text.count(". ") > 20 and "\n\n" in text  # sentences and paragraphs
    assert abs(count_o200k(text) - 2_000) <= 3


@pytest.mark.parametrize("tokens", SIZES)
def test_synthetic_prompt_size_at_the_simulator(simulator, tmp_path, tokens: int) -> None:
    protocols = ("openai-chat", "anthropic", "gemini")
    providers = {
        p.replace("-", "_"): {
            "protocol": p,
            "api_key": "sk-test-key",
            "regions": {"local": simulator.base_url + BASE_PATH[p]},
            # no prefill delay: the size is what is measured here, not the latency
            "models": ["sim:ttft=5:itl=1:tokens=5:jitter=0"],
        }
        for p in protocols
    }
    config = {
        "providers": providers,
        "prompts": {"long": {"synthetic": {"tokens": tokens, "seed": 1}, "max_tokens": 16}},
        "checks": [{"providers": sorted(providers), "prompts": ["long"], "timeout": "20s", "ttft_timeout": "20s"}],
    }
    targets = load_config_text(json.dumps(config), base_dir=tmp_path, env={}).targets
    request = probe_request(targets[0], nonce="00000000")
    (message,) = request.messages
    assert message.content.endswith("In one sentence, what is the text above about?")
    samples = probe_all(list(targets))
    for sample in samples:
        assert sample.ok, sample.error_message
        # the provider's count (here: the simulator's, o200k) of the whole prompt, nonce included
        assert abs(sample.input_tokens - tokens) <= 0.02 * tokens, (sample.provider, sample.input_tokens)
