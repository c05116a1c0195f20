"""What polling the live ranking costs (issue 25): GET /routes answered in full and as a 304, the
MCP `best_routes` tool (the SDK's in-memory session: the tool's own cost), and the LiteLLM callback's per-request choice.

    python -m benchmarks.routes_poll [--targets 200] [--minutes 30] [--requests 50] [--database URL]

Seeds N targets (N/4 canonical models, 4 routes each) with a sample a minute per target over the
window, starts the real status server (the one `firsttoken run` serves /routes and /mcp from) on
loopback, and times each path in the same run. Prints one table; quote ratios, not absolutes.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import httpx

from monitor.http.answer_cache import AnswerCache, ttl_for
from monitor.http.app import build_app
from monitor.http.health import Health
from monitor.http.routes import routes_handler
from monitor.http.server import StatusServer
from monitor.integrations.route_choice import choose, routes_from_json
from monitor.sample import Sample
from monitor.storage import migrate
from monitor.storage.db import make_engine
from monitor.storage.queries import insert_samples


def seed(engine, n_targets: int, minutes: int, now: datetime) -> dict[str, str]:
    rng = random.Random(7)
    samples, bases = [], {}
    for t in range(n_targets):
        model, route = f"m{t // 4}", t % 4
        target = f"p{route}/{model}@r:short"
        bases[target] = f"http://p{route}.example/v1"
        for m in range(minutes):
            ok = rng.random() > 0.01
            ttft = rng.lognormvariate(5 + 0.3 * route, 0.3)
            samples.append(
                Sample(target=target, provider=f"p{route}", model=model, region="r", prompt="short",
                       started_at=now - timedelta(minutes=minutes - m), ok=ok,
                       error_kind=None if ok else "server_error", ttft_ms=ttft if ok else None,
                       tps=rng.lognormvariate(4, 0.2) if ok else None, agent="bench")
            )  # fmt: skip
    insert_samples(engine, samples)
    return bases


def timed(fn, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(1000 * (time.perf_counter() - t0))
    return out


def row(name: str, ms: list[float], size: int | str) -> str:
    q = statistics.quantiles(ms, n=100) if len(ms) > 1 else [ms[0]] * 99
    return f"| {name} | {statistics.median(ms):.2f} | {q[94]:.2f} | {size} |"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--targets", type=int, default=200)
    parser.add_argument("--minutes", type=int, default=30)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--database", help="a database URL (default: a fresh SQLite file)")
    args = parser.parse_args()
    now = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as tmp:
        engine = make_engine(args.database or f"sqlite:///{Path(tmp) / 'bench.db'}")
        migrate.upgrade(engine)
        bases = seed(engine, args.targets, args.minutes, now)
        handler = routes_handler(engine, clock=lambda: now, base_urls=lambda: bases)
        server = StatusServer("127.0.0.1", 0, build_app(lambda: [], lambda: Health(True, {}), routes=handler,
                                                        max_age_s=lambda: 60))  # fmt: skip
        # As `firsttoken run` serves it: answers shared for half the cadence (here 5 s).
        cached = StatusServer("127.0.0.1", 0, build_app(lambda: [], lambda: Health(True, {}),
                              routes=AnswerCache(handler, ttl_s=lambda: ttl_for(60)), max_age_s=lambda: 60))  # fmt: skip
        server.start()
        cached.start()
        url = f"http://127.0.0.1:{server.port}/routes?window=30m"
        cached_url = f"http://127.0.0.1:{cached.port}/routes?window=30m"
        with httpx.Client() as client:
            full = client.get(url)
            etag = full.headers["etag"]
            got_200 = timed(lambda: client.get(url).raise_for_status(), args.requests)
            got_304 = timed(lambda: client.get(url, headers={"If-None-Match": etag}), args.requests)
            assert client.get(url, headers={"If-None-Match": etag}).status_code == 304
            client.get(cached_url)
            cached_200 = timed(lambda: client.get(cached_url).raise_for_status(), args.requests)
            cached_304 = timed(lambda: client.get(cached_url, headers={"If-None-Match": etag}), args.requests)
        routes = routes_from_json(full.json())
        deployments = [
            {"litellm_params": {"model": "openai/m0", "api_base": f"http://p{r}.example/v1"}} for r in range(4)
        ]
        chosen = choose(deployments, routes)
        per_choice = timed(lambda: choose(deployments, routes), 2000)
        mcp_ms = mcp_best_routes(args.requests, now, engine)
        server.stop()
        cached.stop()
        engine.dispose()
    print(f"{args.targets} targets ({args.targets // 4} canonical models x 4 routes), {args.minutes} min of samples, "
          f"{engine.dialect.name}; the callback kept {len(chosen)} of {len(deployments)} deployments")  # fmt: skip
    print("| path | p50 ms | p95 ms | bytes |")
    print("| --- | --- | --- | --- |")
    print(row("GET /routes, computed per request, 200", got_200, len(full.content)))
    print(row("GET /routes, computed per request, If-None-Match -> 304", got_304, 0))
    print(row("GET /routes, run's answer cache, 200", cached_200, len(full.content)))
    print(row("GET /routes, run's answer cache, If-None-Match -> 304", cached_304, 0))
    print(row("MCP best_routes (model=m0), SDK in-memory session", mcp_ms, "-"))
    print(row(f"LiteLLM callback choice per request ({len(routes)} routes)", per_choice, "-"))


def mcp_best_routes(n: int, now: datetime, engine) -> list[float]:
    """best_routes through the SDK's in-memory client session: the tool's own cost, no network."""
    from mcp import Client

    from monitor.mcp_server.server import build_server
    from monitor.mcp_server.tools import Reader

    server = build_server(Reader(engine, clock=lambda: now))
    out: list[float] = []

    async def run() -> None:
        async with Client(server) as client:
            for _ in range(n):
                t0 = time.perf_counter()
                await client.call_tool("best_routes", {"model": "m0"})
                out.append(1000 * (time.perf_counter() - t0))

    anyio.run(run)
    return out


if __name__ == "__main__":
    main()
