"""The virtual-time transport: the production probe measures simulated streams exactly, without waiting."""

from __future__ import annotations

import asyncio
import json
import random
import time
from datetime import UTC, datetime

import httpx
import pytest

from monitor.config import load_config_text
from monitor.demo.virtual_time import VirtualClock, VirtualTransport
from monitor.eventloop import run_async
from monitor.probe.runner import probe_target
from monitor.probe.transport.lanes import ClientLanes, warm_up
from monitor.simulator.behaviour import ModelBehaviour
from monitor.simulator.catalogue import Catalogue
from monitor.simulator.request import Request
from monitor.simulator.timeline import UnsupportedFault, respond
from monitor.simulator.wire import base_path

PROTOCOLS = ("openai-chat", "openai-responses", "anthropic", "gemini", "ollama")
EPOCH_S = 1_780_000_000.0


def target_for(base_url: str, model: str, protocol: str = "openai-chat", *, content: str = "hi", ttft_timeout="20s"):
    config = {
        "providers": {
            "p": {
                "protocol": protocol,
                "api_key": "sk-virtual",
                "regions": {"r1": base_url + base_path(protocol)},
                "models": [model],
            }
        },
        "prompts": {"q": {"messages": [{"role": "user", "content": content}], "max_tokens": 200}},
        "checks": [{"providers": ["p"], "prompts": ["q"], "ttft_timeout": ttft_timeout, "timeout": "60s"}],
    }
    (target,) = load_config_text(json.dumps(config), env={}).targets
    return target


def probe_virtual(target, catalogue=None, *, at_s: float = EPOCH_S, seed: int = 7):
    async def main():
        clock = VirtualClock()
        transport = VirtualTransport(catalogue or Catalogue({}), clock, seed=seed)
        async with httpx.AsyncClient(transport=transport) as client:
            clock.set_s(at_s)
            sample = await probe_target(client, target, clock=clock)
        return sample, transport.last, clock

    return asyncio.run(main())


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("jitter", [0.0, 0.3])
def test_measured_ttft_is_the_planned_ttft_exactly(protocol, jitter):
    behaviour = ModelBehaviour(
        ttft_ms=432.1, itl_ms=7.5, output_tokens=40, prefill_ms_per_1k_tokens=80, jitter=jitter, tokens_per_chunk=3
    )
    target = target_for("http://sim/region/r1", "m", protocol, content="word " * 3000)
    sample, timeline, clock = probe_virtual(target, Catalogue({"m": behaviour}))
    assert sample.ok, sample.error_message
    assert timeline.plan is not None and timeline.region == "r1"
    assert sample.ttft_ms == timeline.plan.ttft_ns / 1e6
    assert sample.ttft_ms == timeline.first_token_ns / 1e6
    assert sample.total_ms == timeline.pieces[-1].offset_ns / 1e6
    assert sample.output_tokens == 40
    assert sample.tokens_source == "usage"
    if jitter == 0:
        # 432.1 ms + 80 ms per 1k of the ~3.75k prompt tokens the simulator counts.
        assert sample.ttft_ms == pytest.approx(432.1 + 80 * timeline.plan.prompt_tokens / 1000, abs=1e-6)
    decode_s = (timeline.pieces[-1].offset_ns - timeline.first_token_ns) / 1e9  # the last token closes the stream
    assert sample.tps == pytest.approx(39 / decode_s, rel=1e-12)
    assert sample.started_at == datetime.fromtimestamp(EPOCH_S, UTC)
    assert clock.now_ns == round(EPOCH_S * 1e9) + timeline.pieces[-1].offset_ns


def test_a_simulated_minute_costs_no_wall_time():
    target = target_for("http://sim", "sim:ttft=30000:itl=1000:tokens=30", ttft_timeout="60s")
    started = time.monotonic()
    sample, _timeline, _clock = probe_virtual(target)
    assert sample.ok and sample.ttft_ms == 30000.0 and sample.total_ms == 59000.0
    assert time.monotonic() - started < 1.0


def test_past_the_ttft_deadline_is_a_timeout_in_simulated_time():
    target = target_for("http://sim", "sim:ttft=25000:tokens=5", ttft_timeout="20s")
    sample, _timeline, _clock = probe_virtual(target)
    assert not sample.ok and sample.error_kind == "timeout"


def test_behaviour_is_asked_at_the_simulated_time_and_region():
    seen = []

    class Source:
        def behaviour_for(self, model, region_hint, now_s):
            seen.append((model, region_hint, now_s))
            return ModelBehaviour(ttft_ms=100, output_tokens=3)

    target = target_for("http://sim/region/eu-west", "m")
    probe_virtual(target, Source(), at_s=EPOCH_S + 12.5)
    assert seen == [("m", "eu-west", EPOCH_S + 12.5)]


def test_socket_only_faults_are_refused_not_faked():
    target = target_for("http://sim", "sim:fault=trickle")
    sample, _timeline, _clock = probe_virtual(target)
    # The probe never raises: the transport's refusal is a protocol error naming the fault.
    assert not sample.ok and "trickle" in (sample.error_message or "")
    body = json.dumps({"model": "sim:fault=huge_line", "stream": True, "messages": []}).encode()
    request = Request("POST", "/v1/chat/completions", "/v1/chat/completions", {}, {}, body, "HTTP/1.1", 0, True)
    with pytest.raises(UnsupportedFault):
        respond(request, Catalogue({}), random.Random(0), now_s=0, request_id="r")


# Every fault the backfill can meet, through both paths: the verdicts must agree.
SAME_VERDICT_MODELS = [
    "sim:ttft=5:itl=1:tokens=12:chunk=2",
    "sim:ttft=5:tokens=8:reasoning=4",
    "sim:fault=rate_limited",
    "sim:fault=server_error",
    "sim:fault=overloaded",
    "sim:fault=auth",
    "sim:fault=client_error",
    "sim:fault=stream_error:tokens=8",
    "sim:fault=throttle_stream:tokens=8",
    "sim:fault=truncate:tokens=8",
    "sim:fault=reset:tokens=8",
    "sim:fault=malformed:tokens=8",
    "sim:fault=invalid_utf8:tokens=8",
    "sim:fault=empty",
    "sim:fault=html",
    "sim:fault=html_502",
    "sim:fault=slow_headers:delay=50:tokens=4",
    "sim:fault=hang:tokens=4",
    "sim:usage=false:tokens=10",
]


def verdict(sample):
    return (sample.ok, sample.error_kind, sample.http_status, sample.output_tokens, sample.tokens_source, sample.chunks)


@pytest.mark.parametrize("protocol", ["openai-chat", "anthropic", "gemini"])
def test_virtual_and_real_simulator_agree_on_every_fault(simulator, protocol):
    real_targets = [target_for(simulator.base_url, m, protocol, ttft_timeout="1s") for m in SAME_VERDICT_MODELS]

    async def real():
        await warm_up()
        async with ClientLanes() as lanes:
            out = []
            for target in real_targets:
                async with lanes.lane(target.base_url) as client:
                    out.append(await probe_target(client, target))
            return out

    real_samples = run_async(real())
    for model, real_sample in zip(SAME_VERDICT_MODELS, real_samples, strict=True):
        virtual_sample, _timeline, _clock = probe_virtual(target_for("http://sim", model, protocol, ttft_timeout="1s"))
        assert verdict(virtual_sample) == verdict(real_sample), model
