"""DESIGN §16 "Must show": two real `firsttoken run` agents on one PostgreSQL, each reaching providers x
and z through its own TCP relays in front of the simulator (tests/relay.py).

- One agent's path to x broken (its relay holds every byte past the first-token timeout) leaves x
  operational on /status and /status.json, with no incident: one vantage point's trouble is its own.
- Both agents' paths to z broken: z is in outage on both, with one published incident naming it.
"""

from __future__ import annotations

import json
import time
import uuid

import httpx
import pytest

from tests.alerts.receiver import Receiver
from tests.alerts.service_proc import ServiceProcess
from tests.net import free_port
from tests.relay import DelayRelay

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

BROKEN_S = 3.0  # each way: past the 2 s first-token timeout, so every probe through it is a timeout
BEHAVIOUR = {"ttft_ms": 40, "itl_ms": 2, "output_tokens": 5, "jitter": 0.05}
ERRORS = {"name": "errors", "metric": "error_rate", "kind": "threshold", "above": "30%", "window": "12s",
          "min_samples": 3, "for_evaluations": 2, "resolve_after": 2, "severity": "page"}  # fmt: skip
OUTAGE = ("partial_outage", "major_outage")


def config(path, database, models, hook_url):
    providers = {
        name: {
            "protocol": "openai-chat",
            "api_key": "sk-status-e2e",
            "regions": {"local": "${RELAY_" + name.upper() + "}/v1"},
            "models": [models[name]],
        }
        for name in ("x", "z")
    }
    spec = {
        "database": database,
        "defaults": {"interval": "0.5s", "timeout": "4s", "ttft_timeout": "2s"},
        "prompts": {"short": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}},
        "providers": providers,
        "checks": [{"providers": ["x", "z"], "prompts": ["short"]}],
        "alerts": [ERRORS],
        "notifiers": [{"name": "hooks", "type": "webhook", "url": hook_url}],
        "status_site": {"title": "Two vantage points"},
    }
    path.write_text(json.dumps(spec))
    return path


def components(base: str) -> dict[str, str]:
    body = httpx.get(f"{base}/status.json", timeout=10).json()
    return {c["name"]: c["status"] for c in body["components"]}, body["incidents"]


def wait(predicate, timeout_s: float):
    """`predicate()` once it is true, polling each second (an agent still starting refuses: not yet)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            value = predicate()
        except httpx.TransportError:
            value = None
        if value:
            return value
        time.sleep(1.0)
    return predicate()


def test_one_agents_broken_path_stays_private_and_both_make_a_public_outage(simulator, pg_server, tmp_path):
    tag = uuid.uuid4().hex[:6]
    models = {"x": f"status-{tag}-x", "z": f"status-{tag}-z"}
    for model in models.values():
        simulator.set_model(model, **BEHAVIOUR)
    url = pg_server.migrated_url()
    host, port = "127.0.0.1", simulator.port
    with (
        Receiver() as hooks,
        DelayRelay(host, port) as ax, DelayRelay(host, port) as az,
        DelayRelay(host, port) as bx, DelayRelay(host, port) as bz,
    ):  # fmt: skip
        path = config(tmp_path / "firsttoken.yaml", url, models, hooks.url + "/alerts")
        agents, bases = [], []
        for name, (rx, rz) in (("a", (ax, az)), ("b", (bx, bz))):
            (tmp_path / name).mkdir()
            listen = f"127.0.0.1:{free_port()}"
            env = {"FIRSTTOKEN_AGENT": name, "RELAY_X": rx.url, "RELAY_Z": rz.url}
            agents.append(ServiceProcess(path, tmp_path / name, env=env, listen=listen, alerting={"group_wait": "1s"}))
            bases.append(f"http://{listen}")
        for agent in agents:
            agent.start()
        try:
            x, z = f"x/{models['x']}", f"z/{models['z']}"
            assert wait(lambda: components(bases[0])[0].get(x) == "operational", 60), [a.log()[-2000:] for a in agents]

            bx.delay_s = BROKEN_S  # b's own path to x only
            firing = wait(lambda: [r.json() for r in hooks.accepted if r.json()["status"] == "firing"], 120)
            assert firing, [a.log()[-1500:] for a in agents]
            assert all(b["scope"]["agent"] == "b" and b["severity"] == "ticket" for b in firing), firing
            time.sleep(20)  # past the status page's cache: what it shows now is what it will show
            for base in bases:
                states, incidents = components(base)
                assert states[x] == "operational" and states["x"] == "operational", states
                assert incidents == []
                assert 'class="banner st-operational"' in httpx.get(f"{base}/status/x", timeout=10).text

            az.delay_s = bz.delay_s = BROKEN_S  # both vantage points lose z: the provider's outage
            assert wait(lambda: components(bases[0])[0].get(z) in OUTAGE, 90), components(bases[0])
            states, incidents = wait(lambda: (lambda s: s if s[1] else None)(components(bases[1])), 60)
            assert states[z] in OUTAGE and states["z"] in OUTAGE and states[x] == "operational", states
            assert len(incidents) == 1 and "z" in incidents[0]["name"], incidents
            assert [c["name"] for c in incidents[0]["components"]] == [z]
            pages = [r.json() for r in hooks.accepted if r.json()["severity"] == "page"]
            assert {p["scope"]["provider"] for p in pages} == {"z"}

            def outage_page() -> bool:  # the HTML is re-rendered in the background, on its own cache
                page = httpx.get(f"{bases[0]}/status/z", timeout=10).text
                return any(f'class="banner st-{state}"' in page for state in OUTAGE)

            assert wait(outage_page, 60)
        finally:
            for agent in agents:
                agent.stop()
