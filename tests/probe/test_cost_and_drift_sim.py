"""cost_usd and answer_fingerprint on real probes of the simulator, through the config loader."""

from __future__ import annotations

import json

from monitor.config import load_config_text
from monitor.eventloop import run_async
from monitor.probe.runner import probe_target
from monitor.probe.transport.lanes import ClientLanes, warm_up
from tests.conftest import BASE_PATH


def _probe(targets, prices, repeat: int = 1):
    async def main():
        await warm_up()
        out = []
        async with ClientLanes() as lanes:
            for _ in range(repeat):
                for t in targets:
                    async with lanes.lane(t.base_url) as client:
                        out.append(await probe_target(client, t, price=prices(t.provider, t.model)))
        return out

    return run_async(main())


def test_cost_and_fingerprint(simulator, tmp_path) -> None:
    model = "sim:ttft=5:itl=1:tokens=20:reasoning=6:jitter=0"
    providers = {
        "oa": {
            "protocol": "openai-chat",
            "regions": {"l": simulator.base_url + BASE_PATH["openai-chat"]},
            "models": [model, "free"],
        },
    }
    question = [{"role": "user", "content": "Explain TTFT in one sentence."}]
    config = {
        "providers": providers,
        "prompts": {"t0": {"messages": question, "temperature": 0, "max_tokens": 64}, "warm": {"messages": question}},
        "checks": [{"providers": ["oa"], "prompts": ["t0", "warm"]}],
        "prices": {f"oa/{model}": {"input": 2.0, "cached_input": 0.5, "output": 10.0}},
    }
    cfg = load_config_text(json.dumps(config), base_dir=tmp_path, env={})
    samples = _probe(cfg.targets, cfg.price, repeat=2)
    by = {}
    for s in samples:
        assert s.ok, s.error_message
        by.setdefault((s.model, s.prompt), []).append(s)
    priced = by[(model, "t0")][0]
    # 26 output tokens (20 answer + 6 reasoning, reasoning billed as output), no cache hits
    assert priced.output_tokens == 26 and priced.reasoning_tokens == 6
    expected = (priced.input_tokens * 2.0 + 26 * 10.0) / 1e6
    assert abs(priced.cost_usd - expected) < 1e-12
    assert all(s.cost_usd is None for s in by[("free", "t0")])  # unpriced: no cost, not zero
    # temperature 0: a fingerprint, the same for the same answer whatever the nonce; the two
    # models answer differently (20 tokens against the catalogue default's 64)
    first = {s.answer_fingerprint for s in by[(model, "t0")]}
    second = {s.answer_fingerprint for s in by[("free", "t0")]}
    assert len(first) == len(second) == 1 and None not in first | second and first != second
    assert all(s.answer_fingerprint is None for s in by[(model, "warm")])
