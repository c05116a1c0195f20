"""End to end (issue 12's must-shows) with the real `firsttoken run` against the simulator:

- a gateway's upstream changes mid-run (its TTFT with it): exactly one `change`
  page, `value` the new upstream and `baseline` the old; the steady routes page nothing;
- `firsttoken routes --json` and GET /routes rank four routes of one canonical model
  in the order of the simulator's true TTFT, and a fast route that fails half its
  probes after every route above the floor; the gateway formats name them in that order.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

import pytest
import yaml

from monitor.storage import migrate
from monitor.storage.db import make_engine
from tests.alerts.receiver import Receiver
from tests.alerts.service_proc import ROOT, ServiceProcess

pytestmark = pytest.mark.slow

INTERVAL_S = 0.5
BEHAVIOUR = {"itl_ms": 2, "output_tokens": 5, "jitter": 0.03}
TRUE_TTFT_MS = {"p-a": 60, "p-b": 120, "p-c": 180, "p-d": 240}  # true TTFT of each route
CANONICAL = "llama-70b"


def wait_until(predicate, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


@pytest.fixture(scope="module")
def run(simulator, tmp_path_factory):
    tag = uuid.uuid4().hex[:6]
    workdir = tmp_path_factory.mktemp("routes")
    url = f"sqlite:///{workdir / 'firsttoken.db'}"
    migrate.upgrade(make_engine(url))
    models = {}
    for provider, ttft in TRUE_TTFT_MS.items():  # each route behind a LiteLLM-style gateway naming its upstream
        models[provider] = f"r-{tag}-{provider}"
        simulator.set_model(models[provider], ttft_ms=ttft, gateway="litellm", served_by=f"http://{provider}/v1",
                            **BEHAVIOUR)  # fmt: skip
    models["p-fast"] = f"r-{tag}-fast"  # fastest of all, but half its probes fail
    simulator.set_model(models["p-fast"], ttft_ms=20, error_rate=0.5, **BEHAVIOUR)
    gateway_model = f"r-{tag}-gw"
    simulator.set_model(gateway_model, ttft_ms=80, gateway="openrouter", served_by="Groq", fingerprint="fp_a",
                        **BEHAVIOUR)  # fmt: skip
    providers = {
        p: {
            "protocol": "openai-chat",
            "api_key": "sk-routes-test",
            "regions": {"local": simulator.base_url + "/v1"},
            "models": [{"name": m, "as": CANONICAL}],
        }
        for p, m in models.items()
    }
    providers["gw"] = {
        "protocol": "openai-chat",
        "api_key": "sk-routes-test",
        "regions": {"local": simulator.base_url + "/v1"},
        "models": [gateway_model],
        "params": {"provider": {"order": ["groq"]}},
    }
    with Receiver() as hooks:
        spec = {
            "database": url,
            "agent": "routes",
            "defaults": {"interval": f"{INTERVAL_S}s", "timeout": "10s", "ttft_timeout": "5s"},
            "prompts": {"short": {"messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 8}},
            "providers": providers,
            "checks": [{"providers": list(providers), "prompts": ["short"]}],
            "alerts": [{"name": "route-changed", "metric": "served_by", "kind": "change", "severity": "page"}],
            "notifiers": [{"name": "hooks", "type": "webhook", "url": hooks.url + "/alerts"}],
        }
        config = workdir / "firsttoken.yaml"
        config.write_text(yaml.safe_dump(spec))
        with ServiceProcess(config, workdir) as service:
            port = None

            def listening() -> bool:
                nonlocal port
                found = re.search(r"/metrics on http://127\.0\.0\.1:(\d+)", service.log())
                port = int(found.group(1)) if found else None
                return port is not None

            assert wait_until(listening, 30), service.log()
            time.sleep(6)  # steady: every route establishes its upstream
            simulator.set_model(gateway_model, served_by="Together", ttft_ms=300)  # the gateway falls back
            page = hooks.wait_for(
                lambda r: any(b.json()["status"] == "firing" for b in r.accepted), 90
            )  # settle (15 s) plus confirming probes, on a busy 2-core CI machine
            time.sleep(4)  # past a second page, if one were coming
            routes_cli = subprocess.run(
                [sys.executable, "-m", "monitor", "routes", "--config", str(config), "--model", CANONICAL, "--json"],
                cwd=ROOT, capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            formats = {
                fmt: subprocess.run(
                    [sys.executable, "-m", "monitor", "routes", "--config", str(config), "--format", fmt],
                    cwd=ROOT, capture_output=True, text=True, timeout=60,
                ).stdout
                for fmt in ("openrouter", "litellm")
            }  # fmt: skip
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/routes?model={CANONICAL}&window=30m") as resp:
                http = json.loads(resp.read())
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics") as resp:
                metrics = resp.read().decode()
            with pytest.raises(urllib.error.HTTPError) as bad:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/routes?window=soon")
            log = service.log()
        yield {
            "page": page,
            "bodies": [b.json() for b in hooks.accepted],
            "cli": routes_cli,
            "formats": formats,
            "http": http,
            "metrics": metrics,
            "bad_status": bad.value.code,
            "gateway_model": gateway_model,
            "log": log,
        }


def test_an_upstream_change_pages_once_with_old_and_new_values(run):
    assert run["page"], run["log"]
    firing = [b for b in run["bodies"] if b["status"] == "firing"]
    assert len(firing) == 1, firing
    (body,) = firing
    assert (body["rule"], body["metric"]) == ("route-changed", "served_by")
    assert (body["value"], body["baseline"]) == ("Together", "Groq")
    assert body["scope"]["provider"] == "gw"  # the steady routes (four upstreams, one failing) paged nothing
    assert "changed from Groq to Together" in body["summary"]


def test_routes_json_ranks_by_true_ttft_and_the_failing_route_last(run):
    assert run["cli"].returncode == 0, run["cli"].stderr
    routes = [json.loads(line) for line in run["cli"].stdout.splitlines()]
    assert [r["provider"] for r in routes] == ["p-a", "p-b", "p-c", "p-d", "p-fast"]
    assert [r["rank"] for r in routes] == [1, 2, 3, 4, 5]
    assert {r["model"] for r in routes} == {CANONICAL}
    for r in routes[:4]:
        assert r["availability"] == 1.0 and r["samples"] >= 5
        assert r["served_by"] == f"http://{r['provider']}/v1"
        assert r["ttft_ms"]["p50"] == pytest.approx(TRUE_TTFT_MS[r["provider"]], abs=25)
        assert set(r["ttft_ms"]) == {"p50", "p90", "p99"} and r["tps"]["p50"] > 0
    fast = routes[4]
    assert fast["availability"] < 0.99 and fast["ttft_ms"]["p50"] < routes[0]["ttft_ms"]["p50"]
    assert fast["served_by"] is None and fast["cost_per_1k_probes_usd"] is None


def test_get_routes_is_the_same_ranking_in_openrouter_endpoint_shape(run):
    routes = run["http"]["routes"]
    assert [r["provider"] for r in routes] == ["p-a", "p-b", "p-c", "p-d", "p-fast"]
    for r in routes[:4]:
        assert set(r["latency_last_30m"]) == {"p50", "p75", "p90", "p99"}
        assert r["latency_last_30m"]["p50"] == pytest.approx(TRUE_TTFT_MS[r["provider"]], abs=25)
        assert r["throughput_last_30m"] > 0
        assert r["uptime_last_5m"] == r["uptime_last_30m"] == r["uptime_last_1d"] == 100.0
    assert routes[4]["uptime_last_30m"] < 99
    assert run["bad_status"] == 400


def test_gateway_formats_follow_the_ranking(run):
    blocks = [json.loads(line) for line in run["formats"]["openrouter"].splitlines()]
    (llama,) = [b for b in blocks if b["model"] == CANONICAL]
    assert llama["provider"] == {"order": ["p-a", "p-b", "p-c", "p-d"], "ignore": ["p-fast"]}
    model_list = yaml.safe_load(run["formats"]["litellm"])["model_list"]
    ordered = [(e["litellm_params"]["model"].split("/")[0], e["litellm_params"]["order"])
               for e in model_list if e["model_name"] == CANONICAL]  # fmt: skip
    assert ordered == [("p-a", 1), ("p-b", 2), ("p-c", 3), ("p-d", 4)]


def test_route_info_gauge_has_one_series_per_target_with_the_current_route(run):
    lines = [line for line in run["metrics"].splitlines() if line.startswith("firsttoken_route_info{")]
    gateway = [line for line in lines if run["gateway_model"] in line]
    assert len(gateway) == 1 and 'served_by="Together"' in gateway[0] and 'system_fingerprint="fp_a"' in gateway[0]
    assert len(lines) == 6  # one per target (every simulated answer names its model and fingerprint)
