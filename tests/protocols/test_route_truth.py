"""Route truth (DESIGN §10): recorded real responses and simulator streams name
who served them, and every field is null where the response names nothing.

Recorded: the shared OpenAI-compatible/OpenRouter/Azure streams (tests/fixtures/
streams), a real LiteLLM proxy's headers and bodies (tests/fixtures/gateways),
rate-limit headers people published (tests/fixtures/route_headers/SOURCES.md).
Simulator: the real probe against the simulator process, gateway fields set per model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from monitor.config import load_config_text
from monitor.probe.replay import replay
from monitor.protocols import get_protocol
from monitor.protocols.route import clean_url, gateway_route, same_route
from tests.conftest import BASE_PATH
from tests.probe.test_runner import probe_all

from .recorded import FIXTURES, replay_stamped, split_events
from .test_recorded_streams import CASES

ROOT = Path(__file__).resolve().parents[1] / "fixtures"


def read_headers(path: Path) -> dict[str, str]:
    lines = path.read_text().splitlines()[1:]  # past the status line
    return {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines if ":" in line)}


def recorded(folder: str, name: str, protocol: str = "openai-chat", **kwargs):
    raw = (FIXTURES / folder / name).read_bytes()
    pieces = split_events(folder, raw)
    return replay(get_protocol(protocol), [(k, p) for k, p in enumerate(pieces)], **kwargs)


# ----------------------------------------------------------------- recorded streams
OPENROUTER = ("openai_compatible", "pydantic__pydantic-ai__openrouter_streaming_reasoning.txt")


def test_openrouter_chunk_provider_is_served_by_and_unpinned_says_nothing_about_fallback():
    result = recorded(*OPENROUTER)
    assert result.route.served_by == "Google"
    assert result.route.fallback is None
    assert result.metrics.model_version == "anthropic/claude-sonnet-4.5"


@pytest.mark.parametrize(
    ("pinned", "fallback"),
    [("google-vertex", False), ("Google", False), ("anthropic", True), ("amazon-bedrock", True)],
)
def test_openrouter_pinned_route_decides_fallback(pinned, fallback):
    assert recorded(*OPENROUTER, pinned_route=pinned).route.fallback is fallback


def test_openrouter_error_stream_still_names_its_provider():
    result = recorded("openai_compatible", "pydantic__pydantic-ai__openrouter_stream_error.txt")
    assert result.route.served_by == "Minimax"
    assert not result.ok


@pytest.mark.parametrize(
    ("folder", "name", "protocol", "model", "fingerprint"),
    [
        ("openai_chat", "pydantic__pydantic-ai__gpt-4o_include_usage.txt", "openai-chat", "gpt-4o-2024-08-06",
         "fp_07871e2ad8"),
        ("openai_chat", "pydantic__pydantic-ai__gpt-5_include_usage_moderation.txt", "openai-chat",
         "gpt-5-2025-08-07", None),  # system_fingerprint: null
        ("azure_openai", "quarkiverse__quarkus-langchain4j__gpt-4o_azure_stream.txt", "azure-openai",
         "gpt-4o-2024-08-06", "fp_ee1d74bde0"),  # the first chunk has model "" and no fingerprint
        ("openai_compatible", "pydantic__pydantic-ai__crusoe_streaming.txt", "openai-chat", None,
         "vllm-0.24.0-tp4-6d31f84d"),
        ("openai_compatible", "pydantic__pydantic-ai__hf_router_novita.txt", "openai-chat", None, None),  # ""
        ("openai_compatible", "pydantic__pydantic-ai__groq_stream.txt", "openai-chat", "openai/gpt-oss-120b",
         "fp_caa2017b29"),
        ("openai_compatible", "unknown-repo__llamacpp_b6925_gpt-oss_tail_FRAGMENT.txt", "openai-chat", None,
         "b6925-cd5e3b575"),
    ],
)  # fmt: skip
def test_system_fingerprint_apart_from_model_version(folder, name, protocol, model, fingerprint):
    result = recorded(folder, name, protocol)
    assert result.route.system_fingerprint == fingerprint
    if model is not None:
        assert result.metrics.model_version == model
    assert result.route.served_by is None  # none of these names an upstream


@pytest.mark.parametrize("case", [c for c in CASES if "openrouter" not in c.file], ids=lambda c: c.file[:48])
def test_streams_that_name_no_route_give_nulls(case):
    raw = (FIXTURES / case.folder / case.file).read_bytes()
    route = replay_stamped(get_protocol(case.protocol), split_events(case.folder, raw)).route
    assert (route.served_by, route.fallback, route.ratelimit_remaining_requests) == (None, None, None)
    assert route.ratelimit_remaining_tokens is None
    if case.protocol not in ("openai-chat", "azure-openai"):
        assert route.system_fingerprint is None


# ----------------------------------------------------------------- recorded gateway
LITELLM = ROOT / "gateways" / "litellm_proxy"


@pytest.mark.parametrize(
    ("name", "served_by", "fallback"),
    [("llama-70b", "http://127.0.0.1:18701/v1", False), ("flaky-70b", "http://127.0.0.1:18702/v1", True)],
)
def test_litellm_proxy_names_the_upstream_and_its_fallback(name, served_by, fallback):
    headers = read_headers(LITELLM / f"{name}.headers.txt")
    body = (LITELLM / f"{name}.body.txt").read_bytes()
    result = replay(get_protocol("openai-chat"), [(0, body)], headers=headers)
    assert result.ok
    assert (result.route.served_by, result.route.fallback) == (served_by, fallback)
    assert result.route.system_fingerprint is None  # the proxy's chunks carry none
    assert result.route.ratelimit_remaining_requests is None  # no key limits, upstream sent none


def test_published_rate_limit_headers():
    openai = read_headers(ROOT / "route_headers" / "openai_chat_completions.headers.txt")
    route = get_protocol("openai-chat").route_truth(openai)
    assert (route.ratelimit_remaining_requests, route.ratelimit_remaining_tokens) == (4999, 159976)
    anthropic = read_headers(ROOT / "route_headers" / "anthropic_messages.headers.txt")
    route = get_protocol("anthropic").route_truth(anthropic)
    assert (route.ratelimit_remaining_requests, route.ratelimit_remaining_tokens) == (999, 96000)
    assert route.served_by is None and route.fallback is None
    # each protocol reads its own provider's spelling, not the other's
    assert get_protocol("openai-chat").route_truth(anthropic).ratelimit_remaining_requests is None


# ----------------------------------------------------------------- pure rules
def test_gateway_headers_from_documentation():
    # Cloudflare AI Gateway: cf-aig-step is the fallback step that answered (0 = the first)
    assert gateway_route({"cf-aig-step": "0"}).fallback is False
    assert gateway_route({"cf-aig-step": "1"}).fallback is True
    # Portkey: the config target that answered; no claim about fallback (also load balancing)
    route = gateway_route({"x-portkey-last-used-option-index": "config.targets[1]"})
    assert (route.served_by, route.fallback) == ("config.targets[1]", None)
    # ngrok AI Gateway: the upstream model, and attempts (> 1: failed over)
    route = gateway_route({"ngrok-aig-model": "openai:gpt-4o", "ngrok-aig-attempts": "2"})
    assert (route.served_by, route.fallback) == ("openai:gpt-4o", True)
    # Azure's own region header
    assert get_protocol("azure-openai").route_truth({"x-ms-region": "Sweden Central"}).served_by == "Sweden Central"
    assert get_protocol("openai-chat").route_truth({"x-ms-region": "Sweden Central"}).served_by is None
    # garbage counts are no counts
    assert gateway_route({"x-ratelimit-remaining-requests": "inf"}).ratelimit_remaining_requests is None
    assert gateway_route({"x-ratelimit-remaining-tokens": "-3"}).ratelimit_remaining_tokens is None


def test_api_base_never_carries_credentials_or_queries():
    assert clean_url("https://user:sk-secret@host.example:8443/v1/?key=sk-x#f") == "https://host.example:8443/v1"
    assert clean_url("not a url?key=sk-x") is None


def test_same_route_matches_openrouter_slugs_to_display_names():
    assert same_route("DeepInfra", "deepinfra/fp8")
    assert same_route("Google", "google-vertex")
    assert not same_route("Together", "fireworks")


# ----------------------------------------------------------------- simulator streams
def sim_target(simulator, tmp_path, protocol: str, model: str, params: dict | None = None):
    provider = {
        "protocol": protocol,
        "api_key": "sk-test-key",
        "regions": {"local": simulator.base_url + BASE_PATH[protocol]},
        "models": [model],
    }
    if params:
        provider["params"] = params
    config = {
        "providers": {"sim": provider},
        "prompts": {"p": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 16}},
        "checks": [{"providers": ["sim"], "prompts": ["p"]}],
    }
    (target,) = load_config_text(json.dumps(config), base_dir=tmp_path, env={}).targets
    return target


def test_simulated_openrouter_names_provider_and_pin_decides_fallback(simulator, tmp_path):
    simulator.set_model("route-or", ttft_ms=5, itl_ms=1, output_tokens=4, gateway="openrouter",
                        served_by="DeepInfra", fingerprint="fp_sim_a")  # fmt: skip
    pinned = sim_target(simulator, tmp_path, "openai-chat", "route-or", {"provider": {"order": ["deepinfra"]}})
    other = sim_target(simulator, tmp_path, "openai-chat", "route-or", {"provider": {"order": ["together"]}})
    unpinned = sim_target(simulator, tmp_path, "openai-chat", "route-or")
    a, b, c = probe_all([pinned, other, unpinned])
    assert all(s.ok for s in (a, b, c))
    assert (a.served_by, a.system_fingerprint, a.fallback) == ("DeepInfra", "fp_sim_a", False)
    assert (b.served_by, b.fallback) == ("DeepInfra", True)
    assert (c.served_by, c.fallback) == ("DeepInfra", None)
    assert a.ratelimit_remaining_requests is None and a.ratelimit_remaining_tokens is None


@pytest.mark.parametrize("protocol", ["openai-chat", "anthropic", "gemini", "ollama", "openai-responses"])
def test_simulated_litellm_headers_reach_every_protocol(simulator, tmp_path, protocol):
    simulator.set_model("route-ll", ttft_ms=5, itl_ms=1, output_tokens=4, gateway="litellm",
                        served_by="http://backup.internal/v1", fallbacks=1,
                        ratelimit_remaining_requests=41, ratelimit_remaining_tokens=9000)  # fmt: skip
    (sample,) = probe_all([sim_target(simulator, tmp_path, protocol, "route-ll")])
    assert sample.ok, sample.error_message
    assert (sample.served_by, sample.fallback) == ("http://backup.internal/v1", True)
    assert (sample.ratelimit_remaining_requests, sample.ratelimit_remaining_tokens) == (41, 9000)


def test_simulated_azure_region_and_quota_on_a_429(simulator, tmp_path):
    simulator.set_model("route-az", ttft_ms=5, itl_ms=1, output_tokens=4, gateway="azure", served_by="swedencentral")
    (ok,) = probe_all([sim_target(simulator, tmp_path, "azure-openai", "route-az")])
    assert (ok.served_by, ok.system_fingerprint, ok.fallback) == ("swedencentral", "fp_simulator", None)
    simulator.set_model("route-429", fault="rate_limited", ratelimit_remaining_requests=0,
                        ratelimit_remaining_tokens=0)  # fmt: skip
    (limited,) = probe_all([sim_target(simulator, tmp_path, "openai-chat", "route-429")])
    assert limited.error_kind == "rate_limited"
    assert (limited.ratelimit_remaining_requests, limited.ratelimit_remaining_tokens) == (0, 0)


@pytest.mark.parametrize("protocol", ["anthropic", "gemini", "ollama", "openai-responses", "bedrock-converse"])
def test_simulated_streams_without_route_give_nulls(simulator, tmp_path, protocol, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    (sample,) = probe_all([sim_target(simulator, tmp_path, protocol, "sim:ttft=5:itl=1:tokens=4")])
    assert sample.ok, sample.error_message
    assert (sample.served_by, sample.system_fingerprint, sample.fallback) == (None, None, None)
    assert (sample.ratelimit_remaining_requests, sample.ratelimit_remaining_tokens) == (None, None)
