"""Measurement overhead: measured TTFT minus the simulator's true TTFT (DESIGN §7).

Truth is the simulator's own clock: first-token write time minus the time the
request had fully arrived (both `perf_counter_ns`, CLOCK_MONOTONIC, which is
shared across processes on Linux). Overhead therefore includes sending the
request, delivering the token and the client's own processing.

Three clients against the same simulator process, in the same run, bursts
interleaved so machine noise falls on all of them alike:
  firsttoken  the probe engine (monitor.probe.runner.probe_target)
  sdk         the seed articles' loop: official `openai` SDK, AsyncOpenAI,
              timestamp of the first `choices[0].delta.content`
  httpx-lean  a bare httpx stream that stamps the first content byte pattern
For 1, 50 and 200 streams started at once; "cold" bursts open new connections
(a fresh client per burst), "warm" bursts reuse a kept-alive pool.

    python -m benchmarks.accuracy [--rounds 4] [--concurrency 1,50,200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
from openai import AsyncOpenAI

from monitor.config import load_config_text
from monitor.eventloop import run_async
from monitor.probe.runner import probe_target
from monitor.probe.transport.lanes import ClientLanes, warm_up
from monitor.simulator.testing import SimulatorProcess

MODEL = "sim:ttft=100:itl=5:tokens=16:jitter=0"
PROMPT = "Explain TTFT in one sentence."


def build_target(base_url: str):
    config = {
        "providers": {
            "sim": {
                "protocol": "openai-chat",
                "api_key": "sk-bench",
                "regions": {"local": base_url + "/v1"},
                "models": [MODEL],
            }
        },
        "prompts": {"p": {"messages": [{"role": "user", "content": PROMPT}], "max_tokens": 64}},
        "checks": [{"providers": ["sim"], "prompts": ["p"]}],
    }
    with tempfile.TemporaryDirectory() as tmp:
        return load_config_text(json.dumps(config), base_dir=tmp, env={}).targets[0]


class FirstToken:
    name = "firsttoken"

    def __init__(self, target):
        self.target = target

    def client(self):
        return ClientLanes()

    async def one(self, lanes) -> tuple[str, float]:
        async with lanes.lane(self.target.base_url) as client:
            sample = await probe_target(client, self.target)
        if not sample.ok:
            raise RuntimeError(sample.error_message)
        return sample.request_id, sample.ttft_ms


class SdkLoop:
    name = "sdk"

    def __init__(self, base_url: str):
        self.base_url = base_url + "/v1"

    def client(self):
        return AsyncOpenAI(base_url=self.base_url, api_key="sk-bench", max_retries=0)

    async def one(self, client) -> tuple[str, float]:
        start = time.perf_counter()
        stream = await client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": PROMPT}], stream=True
        )
        ttft = None
        async for chunk in stream:
            if ttft is None and chunk.choices and chunk.choices[0].delta.content:
                ttft = time.perf_counter() - start
        return stream.response.headers["x-request-id"], ttft * 1000


class HttpxLean:
    name = "httpx-lean"

    def __init__(self, base_url: str):
        self.url = base_url + "/v1/chat/completions"
        self.body = json.dumps(
            {"model": MODEL, "messages": [{"role": "user", "content": PROMPT}], "stream": True}
        ).encode()

    def client(self):
        return httpx.AsyncClient(timeout=None, limits=httpx.Limits(max_connections=1000))

    async def one(self, client) -> tuple[str, float]:
        start = time.perf_counter_ns()
        ttft_ns = None
        async with client.stream(
            "POST", self.url, content=self.body, headers={"content-type": "application/json"}
        ) as r:
            async for data in r.aiter_raw():
                now = time.perf_counter_ns()
                if ttft_ns is None and b'"content":"' in data.replace(b'"content":""', b""):
                    ttft_ns = now - start
        return r.headers["x-request-id"], ttft_ns / 1e6


async def burst(method, client, n: int) -> list[tuple[str, float]]:
    return await asyncio.gather(*(method.one(client) for _ in range(n)))


async def close(client) -> None:
    await (client.aclose() if hasattr(client, "aclose") else client.close())


async def measure(sim: SimulatorProcess, methods, concurrency: int, rounds: int, warm: bool) -> dict[str, list[float]]:
    """Overheads (ms) per method; bursts interleaved, order rotated per round."""
    results: dict[str, list[tuple[str, float]]] = {m.name: [] for m in methods}
    clients = {m.name: m.client() for m in methods} if warm else {}
    if warm:  # open the pool's connections outside the measurement
        for m in methods:
            await burst(m, clients[m.name], concurrency)
    for r in range(rounds):
        order = methods[r % len(methods) :] + methods[: r % len(methods)]
        for m in order:
            client = clients[m.name] if warm else m.client()
            if concurrency == 1:
                for _ in range(10):
                    results[m.name] += await burst(m, client, 1)
            else:
                results[m.name] += await burst(m, client, concurrency)
            if not warm:
                await close(client)
            await asyncio.sleep(0.3)  # let the simulator drain
    for client in clients.values():
        await close(client)
    return {name: [ttft - true_ttft_ms(sim, rid) for rid, ttft in rows] for name, rows in results.items()}


def true_ttft_ms(sim: SimulatorProcess, request_id: str) -> float:
    truth = sim.truth(request_id)
    return (truth["first_token_ns"] - truth["arrival_ns"]) / 1e6


def pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


async def main_async(args) -> str:
    await warm_up()
    lines = [
        f"machine: {platform.machine()}, {platform.processor() or 'cpu'}; python {platform.python_version()}; "
        f"{len(__import__('os').sched_getaffinity(0))} cores",
        "",
        "| streams | connections | client | n | overhead p50 ms | p90 ms | p99 ms | p50 vs sdk |",
        "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    with SimulatorProcess() as sim:
        methods = [FirstToken(build_target(sim.base_url)), SdkLoop(sim.base_url), HttpxLean(sim.base_url)]
        for concurrency in args.concurrency:
            for warm in (False, True):
                overheads = await measure(sim, methods, concurrency, args.rounds, warm)
                sdk_p50 = statistics.median(overheads["sdk"])
                for m in methods:
                    values = overheads[m.name]
                    p50 = statistics.median(values)
                    lines.append(
                        f"| {concurrency} | {'warm' if warm else 'cold'} | {m.name} | {len(values)} | {p50:.2f} | "
                        f"{pct(values, 90):.2f} | {pct(values, 99):.2f} | {p50 / sdk_p50:.2f}× |"
                    )
                print("\n".join(lines[-len(methods) :]), file=sys.stderr, flush=True)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--concurrency", type=lambda s: [int(x) for x in s.split(",")], default=[1, 50, 200])
    parser.add_argument("--out", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    table = run_async(main_async(args))
    print(table)
    if args.out:
        args.out.write_text(table + "\n")


if __name__ == "__main__":
    main()
