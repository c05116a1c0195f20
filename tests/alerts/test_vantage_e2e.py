"""Two vantage points end to end (issue 21 "Must show"): two real `firsttoken run` agents on one PostgreSQL.

Both agents read one config file (their name from FIRSTTOKEN_AGENT, the
faulted provider's URL from an environment variable). Each reaches provider
`path` through its own TCP relay in front of the simulator (tests/relay.py),
provider `other` directly. A fault on agent b's relay alone pages nothing and
raises one vantage alert naming b; the same fault on both relays pages exactly
once, with both agents in `agents`.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest
from sqlalchemy import select

from monitor.storage.db import make_engine
from monitor.storage.models import SampleRow
from tests.relay import DelayRelay

from .receiver import Receiver
from .service_proc import ServiceProcess

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

INTERVAL_S = 0.5
BEHAVIOUR = {"ttft_ms": 60, "itl_ms": 2, "output_tokens": 5, "jitter": 0.05}
RULE = {
    "name": "slow",
    "metric": "ttft_ms",
    "kind": "threshold",
    "percentile": 50,
    "above": 250,
    "window": "2s",
    "min_samples": 3,
    "for_evaluations": 2,
    "resolve_after": 2,
    "severity": "page",
}


def write_config(path: Path, database: str, sim_url: str, models: dict[str, str], hook_url: str) -> Path:
    spec = {
        "database": database,
        "defaults": {"interval": f"{INTERVAL_S}s", "timeout": "10s", "ttft_timeout": "5s"},
        "prompts": {"short": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}},
        "providers": {
            "path": {
                "protocol": "openai-chat",
                "api_key": "sk-vantage-e2e",
                "regions": {"local": "${VANTAGE_PATH_URL}/v1"},
                "models": [models["path"]],
            },
            "other": {
                "protocol": "openai-chat",
                "api_key": "sk-vantage-e2e",
                "regions": {"local": sim_url + "/v1"},
                "models": [models["other"]],
            },
        },
        "checks": [{"providers": ["path", "other"], "prompts": ["short"]}],
        "alerts": [RULE],
        "notifiers": [{"name": "hooks", "type": "webhook", "url": hook_url}],
    }
    path.write_text(json.dumps(spec))
    return path


def bodies(hooks: Receiver, *, status: str | None = None, severity: str | None = None) -> list[dict]:
    out = [r.json() for r in hooks.accepted]
    return [
        b for b in out if (status is None or b["status"] == status) and (severity is None or b["severity"] == severity)
    ]


def test_a_fault_on_one_agents_path_tickets_it_and_on_both_pages_once(simulator, pg_server, tmp_path):
    tag = uuid.uuid4().hex[:6]
    models = {"path": f"vantage-{tag}-p", "other": f"vantage-{tag}-o"}
    for model in models.values():
        simulator.set_model(model, **BEHAVIOUR)
    url = pg_server.migrated_url()
    sim_host, sim_port = "127.0.0.1", simulator.port
    with (
        Receiver() as hooks,
        DelayRelay(sim_host, sim_port) as relay_a,
        DelayRelay(sim_host, sim_port) as relay_b,
    ):
        config = write_config(tmp_path / "firsttoken.yaml", url, simulator.base_url, models, hooks.url + "/alerts")
        agents = []
        for name, relay in (("a", relay_a), ("b", relay_b)):
            workdir = tmp_path / name
            workdir.mkdir()
            env = {"FIRSTTOKEN_AGENT": name, "VANTAGE_PATH_URL": relay.url}
            agents.append(ServiceProcess(config, workdir, env=env, alerting={"group_wait": "1s"}))
        for agent in agents:
            agent.start()
        try:
            time.sleep(6)  # both agents probing normally
            assert bodies(hooks) == [], bodies(hooks)

            relay_b.delay_s = 0.2  # b's own link to provider `path`: +0.4 s per request
            assert hooks.wait_for(lambda r: bodies(r, status="firing"), 45), [a.log()[-3000:] for a in agents]
            time.sleep(4)  # a page, if the quorum were wrong, would come by now
            (ticket,) = bodies(hooks, status="firing")
            assert ticket["severity"] == "ticket" and ticket["scope"]["agent"] == "b"
            assert ticket["scope"]["provider"] == "path" and ticket["scope"]["model"] == models["path"]
            assert ticket["agents"] == ["b"] and ticket["agents_clear"] == ["a"]
            assert "seen from b only; a normal" in ticket["summary"]
            assert bodies(hooks, severity="page") == []
            # The leader asked a to confirm what b began to see; a probed once more, marked so (DESIGN §11).
            engine = make_engine(url)
            try:
                with engine.connect() as conn:
                    confirmed = conn.execute(
                        select(SampleRow.__table__.c.agent, SampleRow.__table__.c.target).where(
                            SampleRow.__table__.c.confirmation.is_(True)
                        )
                    ).all()
            finally:
                engine.dispose()
            target = f"path/{models['path']}@local:short"
            assert confirmed and {tuple(r) for r in confirmed} == {("a", target)}, confirmed

            relay_a.delay_s = 0.2  # the same fault on both paths: the target's, confirmed by both
            assert hooks.wait_for(lambda r: bodies(r, status="firing", severity="page"), 45)
            time.sleep(4)
            (page,) = bodies(hooks, status="firing", severity="page")
            assert page["scope"]["agent"] is None and page["scope"]["model"] == models["path"]
            assert sorted(page["agents"]) == ["a", "b"] and page["agents_clear"] == []
            assert all(b["scope"]["provider"] == "path" for b in bodies(hooks))  # `other` never moved

            relay_a.delay_s = relay_b.delay_s = 0.0
            assert hooks.wait_for(lambda r: bodies(r, status="resolved", severity="page"), 45)
            assert len(bodies(hooks, status="firing", severity="page")) == 1
            for body in bodies(hooks):
                assert "sk-vantage-e2e" not in json.dumps(body)
        finally:
            for agent in agents:
                agent.stop()
