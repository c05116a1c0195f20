"""Issue 25's must-show for gateways: a real LiteLLM proxy (PyPI `litellm[proxy]`) with firsttoken's
callback in its own config routes real requests between two simulator upstreams that
`firsttoken run` probes. Under simple-shuffle it would split them evenly; with the callback the
fast upstream takes them, and when that one degrades, >= 90% of the traffic moves to the other
within one refresh plus two probe intervals. The time it took is written to
test-artifacts/litellm-failover.json (quoted in docs/routing-live.md).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest

from tests.routing.litellm_proxy import LiteLLMProxy
from tests.routing.live_rig import API_KEY, CANONICAL, INTERVAL_S, wait_until

pytestmark = pytest.mark.integration

REFRESH_S = 1.0
UNPROBED = "unprobed-llm"
WINDOW = 20  # requests: "moved" is the first run of this many with >= 90% on the other upstream
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@pytest.fixture(scope="module")
def proxy(live_rig, tmp_path_factory):
    model_list = [
        {
            "model_name": CANONICAL,
            "litellm_params": {"model": f"openai/{live_rig.models[p]}", "api_base": live_rig.api_base(p),
                               "api_key": API_KEY},
        }
        for p in ("up-a", "up-b")
    ]  # fmt: skip
    for p in ("up-a", "up-b"):  # a group firsttoken probes none of: LiteLLM's own choice must stand
        live_rig.upstreams[p].set_model(f"unprobed-{p}", ttft_ms=20, itl_ms=1, output_tokens=3)
        model_list.append({"model_name": UNPROBED, "litellm_params": {
            "model": f"openai/unprobed-{p}", "api_base": live_rig.api_base(p), "api_key": API_KEY}})  # fmt: skip
    settings = {"url": live_rig.base_url, "refresh_s": REFRESH_S, "window": "1m"}
    with LiteLLMProxy(tmp_path_factory.mktemp("litellm"), model_list, settings) as proxy:
        yield proxy


def share(served: list[str], base: str) -> float:
    return sum(s == base for s in served) / len(served)


def test_traffic_follows_the_ranking_and_moves_within_a_refresh_when_the_best_route_fails(live_rig, proxy):
    fast, slow = live_rig.api_base("up-a"), live_rig.api_base("up-b")
    with httpx.Client(timeout=15) as client:
        # Steady: up-a answers in 40 ms, up-b in 160 ms; the callback narrows the group to up-a.
        assert wait_until(lambda: share([proxy.chat(client, CANONICAL) for _ in range(10)], fast) >= 0.9, 30), (
            proxy.log()[-3000:]
        )
        steady = [proxy.chat(client, CANONICAL) for _ in range(40)]
        assert share(steady, fast) >= 0.9, steady

        live_rig.set("up-a", error_rate=1.0)  # every answer of up-a fails now, the probes' and the proxy's
        degraded_at = time.monotonic()
        try:
            sent: list[tuple[float, str]] = []
            moved_at = None
            while time.monotonic() - degraded_at < 30 and moved_at is None:
                sent.append((time.monotonic(), proxy.chat(client, CANONICAL)))
                for i in range(max(0, len(sent) - 2 * WINDOW), len(sent) - WINDOW + 1):
                    window = [s for _, s in sent[i : i + WINDOW]]
                    if share(window, slow) >= 0.9:
                        moved_at = sent[i][0]
                        break
            assert moved_at is not None, (sent[-WINDOW:], proxy.log()[-3000:])
            after = [proxy.chat(client, CANONICAL) for _ in range(40)]
        finally:
            live_rig.set("up-a", error_rate=0.0)
    moved_s = moved_at - degraded_at
    budget_s = REFRESH_S + 2 * INTERVAL_S
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "litellm-failover.json").write_text(
        json.dumps(
            {"moved_s": round(moved_s, 2), "budget_s": budget_s, "refresh_s": REFRESH_S, "probe_interval_s": INTERVAL_S,
             "steady_share_fast": share(steady, fast), "after_share_slow": share(after, slow),
             "requests_until_moved": len(sent)}
        )
    )  # fmt: skip
    assert share(after, slow) >= 0.9, after
    assert moved_s <= budget_s, f"traffic moved after {moved_s:.2f} s, budget {budget_s} s"


def test_a_group_firsttoken_knows_nothing_of_is_routed_as_litellm_would(live_rig, proxy):
    with httpx.Client(timeout=15) as client:
        served = [proxy.chat(client, UNPROBED) for _ in range(40)]
    shares = {p: share(served, live_rig.api_base(p)) for p in ("up-a", "up-b")}
    assert sum(shares.values()) == 1.0 and min(shares.values()) >= 0.2, served  # simple-shuffle's split, untouched
