"""One real `firsttoken run` probing two simulator upstreams that serve the same canonical model,
shared by the live-routing end-to-end tests (MCP, polling, the LiteLLM callback, alternatives).

Each upstream is its own simulator process (its own api_base, as two providers would be);
the tests degrade one with `set_model` and watch what reads the ranking react.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from pathlib import Path

import yaml

from monitor.simulator.testing import SimulatorProcess
from monitor.storage import migrate
from monitor.storage.db import make_engine
from tests.alerts.receiver import Receiver
from tests.alerts.service_proc import ServiceProcess
from tests.waiting import wait_for as wait_until

INTERVAL_S = 0.5
CANONICAL = "live-llm"  # up-a (fast) and up-b: the LiteLLM proxy's pair
ALT_CANONICAL = "alt-llm"  # alt-a (fast) and alt-b: the alerts' pair, degraded apart from the proxy's
MCP_TOKEN = "mcp-token-7d1e5b0c9a"
API_KEY = "sk-live-SECRET-4be2a1"
FAST_TTFT_MS, SLOW_TTFT_MS = 40, 160
BEHAVIOUR = {"itl_ms": 2, "output_tokens": 5, "jitter": 0.02}


@dataclass
class LiveRig:
    service: ServiceProcess
    config: Path
    port: int
    upstreams: dict[str, SimulatorProcess]  # provider -> its simulator (x-a on the first, x-b on the second)
    models: dict[str, str]  # provider -> model id
    hooks: Receiver

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def api_base(self, provider: str) -> str:
        return self.upstreams[provider].base_url + "/v1"

    def set(self, provider: str, **behaviour) -> None:
        self.upstreams[provider].set_model(self.models[provider], **behaviour)


def start_rig(
    workdir: Path, sims: tuple[SimulatorProcess, SimulatorProcess], hooks: Receiver
) -> tuple[LiveRig, ServiceProcess]:
    tag = uuid.uuid4().hex[:6]
    url = f"sqlite:///{workdir / 'firsttoken.db'}"
    migrate.upgrade(make_engine(url))
    upstreams, models, providers = {}, {}, {}
    for pair, canonical in (("up", CANONICAL), ("alt", ALT_CANONICAL)):
        for side, sim, ttft in (("a", sims[0], FAST_TTFT_MS), ("b", sims[1], SLOW_TTFT_MS)):
            p = f"{pair}-{side}"
            upstreams[p], models[p] = sim, f"live-{tag}-{p}"
            sim.set_model(models[p], ttft_ms=ttft, **BEHAVIOUR)
            providers[p] = {
                "protocol": "openai-chat",
                "api_key": API_KEY,
                "regions": {"local": sim.base_url + "/v1"},
                "models": [{"name": models[p], "as": canonical}],
            }
    spec = {
        "database": url,
        "agent": "live",
        "defaults": {"interval": f"{INTERVAL_S}s", "timeout": "10s", "ttft_timeout": "5s"},
        "prompts": {"short": {"messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 8}},
        "providers": providers,
        "checks": [{"providers": list(providers), "prompts": ["short"]}],
        "alerts": [  # slow probes last ~1.2 s each: a short window with few samples
            {
                "name": "slow-ttft",
                "metric": "ttft_ms",
                "kind": "threshold",
                "percentile": 50,
                "above": 1000,
                "window": "6s",
                "min_samples": 3,
                "for_evaluations": 1,
                "severity": "page",
            },
        ],
        "notifiers": [{"name": "hooks", "type": "webhook", "url": hooks.url + "/alerts"}],
        # For the MCP slo_status tool; so lenient that it never alerts beside the tests' own rule.
        "slos": [{"name": "answers", "objective": "1%", "period": "1d", "per": "provider"}],
    }
    config = workdir / "firsttoken.yaml"
    config.write_text(yaml.safe_dump(spec))
    service = ServiceProcess(config, workdir, env={"FIRSTTOKEN_MCP_TOKEN": MCP_TOKEN})
    service.start()
    found = wait_until(lambda: re.search(r"/metrics on http://127\.0\.0\.1:(\d+)", service.log()), 30)
    assert found, service.log()
    return LiveRig(service, config, int(found.group(1)), upstreams, models, hooks), service
