"""What a prompt cache saves, measured the way firsttoken measures it (DESIGN §13).

Cache probes (`cache: true`) against one server, each round a cold request (a ~1,200-token
prefix opened by a nonce new this round) then a warm one (the same prefix, a new nonce after
it); prints cold and warm TTFT p50, the saving, the ratio and the hit ratio. Against the
simulator by default (it plays a provider's prefix cache, per protocol); against a real
server with `--base-url` — e.g. llama.cpp's server, whose slot KV cache is a real prompt cache:

    python -m llama_cpp.server --model PATH --model_alias gemma-3-270m --chat_format gemma --port 8100
    python -m benchmarks.prompt_cache --base-url http://127.0.0.1:8100/v1 --model gemma-3-270m

    python -m benchmarks.prompt_cache [--rounds 10] [--tokens 1200]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile

from monitor.config import load_config_text
from monitor.eventloop import run_async
from monitor.probe.cache_pair import probe_round
from monitor.probe.transport.lanes import ClientLanes, warm_up

SIM_MODEL = "sim:ttft=30:itl=2:tokens=16:prefill=400:jitter=0.05"  # 400 ms per 1,000 uncached tokens


def build_target(base_url: str, model: str, protocol: str, tokens: int, max_tokens: int):
    config = {
        "providers": {"bench": {"protocol": protocol, "api_key": "sk-bench", "regions": {"local": base_url},
                                "models": [model]}},
        "prompts": {"doc": {"synthetic": {"tokens": tokens, "seed": 1}, "max_tokens": max_tokens, "cache": True}},
        "checks": [{"providers": ["bench"], "prompts": ["doc"], "timeout": "120s", "ttft_timeout": "90s"}],
    }  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        return load_config_text(json.dumps(config), base_dir=tmp, env={}).targets[0]


async def measure(target, rounds: int) -> list[tuple]:
    await warm_up()
    out = []
    async with ClientLanes() as lanes:
        for _ in range(rounds):
            async with lanes.lane(target.base_url) as client:
                out.append(await probe_round(client, target))
    return out


def report(label: str, pairs: list[tuple]) -> dict:
    cold = [p[0].ttft_ms for p in pairs if p[0].ok]
    warm = [p[1].ttft_ms for p in pairs if len(p) > 1 and p[1].ok]
    hits = [p[1].cache_hit for p in pairs if len(p) > 1 and p[1].cache_hit is not None]
    cold_p50, warm_p50 = statistics.median(cold), statistics.median(warm)
    row = {
        "server": label,
        "rounds": len(pairs),
        "input_tokens": pairs[0][0].input_tokens,
        "cold_ttft_p50_ms": round(cold_p50, 1),
        "warm_ttft_p50_ms": round(warm_p50, 1),
        "saving_ms": round(cold_p50 - warm_p50, 1),
        "warm/cold": round(warm_p50 / cold_p50, 3),
        "hit_ratio": round(sum(hits) / len(hits), 3) if hits else None,
        "warm_cache_read_tokens": pairs[-1][1].cache_read_tokens if len(pairs[-1]) > 1 else None,
    }
    width = max(len(k) for k in row)
    for key, value in row.items():
        print(f"{key.ljust(width)}  {value}")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", help="a real server (default: a simulator started here)")
    parser.add_argument("--model", default=SIM_MODEL)
    parser.add_argument("--protocol", default="openai-chat")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument(
        "--tokens", type=int, default=1200, help="prefix length (o200k tokens; OpenAI caches from 1,024)"
    )
    parser.add_argument("--max-tokens", type=int, default=8)
    args = parser.parse_args()
    print(f"# {platform.processor() or platform.machine()}, python {platform.python_version()}")
    if args.base_url:
        target = build_target(args.base_url, args.model, args.protocol, args.tokens, args.max_tokens)
        report(args.base_url, run_async(measure(target, args.rounds)))
        return
    from monitor.simulator.testing import SimulatorProcess

    with SimulatorProcess() as sim:
        target = build_target(sim.base_url + "/v1", args.model, args.protocol, args.tokens, args.max_tokens)
        report("simulator", run_async(measure(target, args.rounds)))


if __name__ == "__main__":
    main()
