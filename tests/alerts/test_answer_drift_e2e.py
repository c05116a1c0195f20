"""Answer drift end to end: a temperature-0 prompt's answer changes behind an unchanged model name,
and the real `firsttoken run` pages once through `kind: change` on `answer_fingerprint`."""

from __future__ import annotations

import sqlite3
import time
import uuid

import pytest
import yaml

from monitor.storage import migrate
from monitor.storage.db import make_engine
from tests.alerts.receiver import Receiver
from tests.alerts.service_proc import ServiceProcess

pytestmark = pytest.mark.slow


def wait_for_samples(db, n: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with sqlite3.connect(db) as conn:
                if conn.execute("SELECT count(answer_fingerprint) FROM samples").fetchone()[0] >= n:
                    return True
        except sqlite3.OperationalError:
            pass
        time.sleep(0.2)
    return False


def test_a_changed_answer_pages_once(simulator, tmp_path) -> None:
    model = f"drift-{uuid.uuid4().hex[:6]}"
    # 40 tokens: the fingerprint covers the answer's first 24 words
    simulator.set_model(model, ttft_ms=20, itl_ms=1, output_tokens=40, jitter=0)
    url = f"sqlite:///{tmp_path / 'firsttoken.db'}"
    migrate.upgrade(make_engine(url))
    with Receiver() as hooks:
        spec = {
            "database": url,
            "agent": "drift",
            "defaults": {"interval": "0.5s", "timeout": "10s", "ttft_timeout": "5s"},
            "prompts": {
                "t0": {"messages": [{"role": "user", "content": "Say hi."}], "temperature": 0, "max_tokens": 64}
            },
            "providers": {
                "sim": {
                    "protocol": "openai-chat",
                    "api_key": "sk-drift-test",
                    "regions": {"local": simulator.base_url + "/v1"},
                    "models": [model],
                }
            },
            "checks": [{"providers": ["sim"], "prompts": ["t0"]}],
            "alerts": [{"name": "answer-drift", "metric": "answer_fingerprint", "kind": "change", "severity": "page"}],
            "notifiers": [{"name": "hooks", "type": "webhook", "url": hooks.url + "/alerts"}],
        }
        config = tmp_path / "firsttoken.yaml"
        config.write_text(yaml.safe_dump(spec))
        with ServiceProcess(config, tmp_path) as service:
            assert wait_for_samples(tmp_path / "firsttoken.db", 6, 40), service.log()
            time.sleep(2)  # steady: the fingerprint is established
            assert not hooks.accepted, "a steady answer pages nothing"
            # "another model" behind the same name: a shorter answer, so a different opening
            simulator.set_model(model, output_tokens=8)
            page = hooks.wait_for(lambda r: any(b.json()["status"] == "firing" for b in r.accepted), 30)
            time.sleep(3)  # past a second page, if one were coming
            log = service.log()
        bodies = [b.json() for b in hooks.accepted]
    assert page, log
    firing = [b for b in bodies if b["status"] == "firing"]
    assert len(firing) == 1, firing
    (body,) = firing
    assert body["metric"] == "answer_fingerprint" and body["rule"] == "answer-drift"
    assert body["value"] != body["baseline"] and len(str(body["value"])) == 16
