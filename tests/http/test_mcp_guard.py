"""Nothing open by default: `firsttoken run --listen 0.0.0.0:P` without FIRSTTOKEN_MCP_TOKEN does not serve
/mcp to whoever reaches the port, and says so when it starts; on loopback it serves as before."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from monitor.addresses import is_loopback
from monitor.http.mcp import OPEN_REFUSED, mcp_app
from monitor.storage import migrate
from monitor.storage.db import make_engine
from tests.alerts.service_proc import ServiceProcess
from tests.net import free_port


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("[::1]", True), ("localhost", True),
     ("0.0.0.0", False), ("::", False), ("", False), ("10.1.2.3", False), ("agent.example", False)],
)  # fmt: skip
def test_loopback_is_only_this_machine(host, loopback):
    assert is_loopback(host) is loopback


def test_a_reachable_mcp_without_a_token_refuses(monkeypatch):
    monkeypatch.delenv("FIRSTTOKEN_MCP_TOKEN", raising=False)
    seen = {}
    body = mcp_app(lambda: None, "0.0.0.0", lambda: None)({}, lambda status, headers: seen.update(status=status))
    assert seen["status"] == "403 Forbidden" and b"".join(body) == OPEN_REFUSED


def test_run_on_every_address_without_a_token_does_not_serve_mcp(tmp_path, monkeypatch):
    monkeypatch.delenv("FIRSTTOKEN_MCP_TOKEN", raising=False)
    db = tmp_path / "ft.db"
    engine = make_engine(f"sqlite:///{db}")
    migrate.upgrade(engine)
    engine.dispose()
    config = tmp_path / "firsttoken.yaml"
    config.write_text(json.dumps({
        "database": f"sqlite:///{db}",
        "defaults": {"interval": "1h"},
        "prompts": {"short": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}},
        "providers": {"p": {"protocol": "openai-chat", "regions": {"r": "http://127.0.0.1:9/v1"}, "models": ["m"]}},
        "checks": [{"providers": ["p"], "prompts": ["short"]}],
    }))  # fmt: skip
    port = free_port()
    with ServiceProcess(config, tmp_path, listen=f"0.0.0.0:{port}") as agent:
        deadline, answer = time.monotonic() + 60, None
        while time.monotonic() < deadline and answer is None:
            try:
                answer = httpx.post(f"http://127.0.0.1:{port}/mcp", json={}, timeout=5)
            except httpx.TransportError:
                time.sleep(0.5)
        assert answer is not None, agent.log()[-2000:]
        assert answer.status_code == 403 and b"FIRSTTOKEN_MCP_TOKEN" in answer.content
        assert "/mcp is off: listening on 0.0.0.0 needs FIRSTTOKEN_MCP_TOKEN" in agent.log()
