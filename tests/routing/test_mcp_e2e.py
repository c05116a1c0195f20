"""Issue 25's must-show for MCP: a real `ClientSession` of the official SDK, over stdio
(`firsttoken mcp`) and over streamable HTTP (/mcp on `firsttoken run`'s listen address):
the tools are listed with typed schemas, `best_routes` equals `firsttoken routes --json`
row for row, and the bearer token is enforced on HTTP.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import anyio
import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.alerts.service_proc import ROOT
from tests.routing.live_rig import API_KEY, CANONICAL, MCP_TOKEN

pytestmark = pytest.mark.slow
TOOLS = {"best_routes", "provider_status", "recent_alerts", "slo_status"}


def routes_json(rig, *extra: str, command: str = "routes") -> list[dict]:
    done = subprocess.run(
        [sys.executable, "-m", "monitor", command, "--config", str(rig.config), "--json", *extra],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


async def exercise(session: ClientSession, rig) -> dict:
    await session.initialize()
    listed = await session.list_tools()
    before = routes_json(rig, "--model", CANONICAL, "--window", "1h")
    best = await session.call_tool("best_routes", {"model": CANONICAL, "window": "1h"})
    after = routes_json(rig, "--model", CANONICAL, "--window", "1h")
    status = await session.call_tool("provider_status", {"provider": "up-b"})
    unknown = await session.call_tool("provider_status", {"provider": "nope"})
    alerts = await session.call_tool("recent_alerts", {"since": "1h"})
    bad = await session.call_tool("best_routes", {"window": "soon"})
    slo = await session.call_tool("slo_status", {})
    slo_cli = routes_json(rig, command="slo")
    return {
        "tools": {t.name: t for t in listed.tools},
        "best": best,
        "cli": (before, after),
        "status": status,
        "unknown": unknown,
        "alerts": alerts,
        "bad": bad,
        "slo": (slo, slo_cli),
    }


def check(result: dict) -> None:
    tools = result["tools"]
    assert set(tools) >= TOOLS
    for name in TOOLS:
        assert tools[name].input_schema["type"] == "object" and tools[name].output_schema["type"] == "object"
        assert tools[name].annotations.read_only_hint is True
    assert set(tools["best_routes"].input_schema["properties"]) >= {"model", "prompt", "agent", "window"}
    best = result["best"]
    assert not best.is_error, best.content
    rows = best.structured_content["routes"]
    assert sorted(r["provider"] for r in rows) == ["up-a", "up-b"] and [r["rank"] for r in rows] == [1, 2]
    # The same rows as `routes --json`, in the same order (figures move with each probe, so the
    # tool's answer must equal the command's from just before or just after it, on the slow fields).
    stable = ("model", "prompt", "rank", "target", "provider", "provider_model", "region", "above_floor")
    for cli in result["cli"]:
        assert [{k: r[k] for k in stable} for r in rows] == [{k: r[k] for k in stable} for r in cli]
        assert [set(r) for r in rows] == [set(r) for r in cli]
    status = result["status"]
    assert not status.is_error, status.content
    assert status.structured_content["provider"] == "up-b"  # never degraded by any test
    assert status.structured_content["status"] == "operational"
    assert status.structured_content["ttft_p50_ms"] > 0
    assert result["unknown"].is_error and "unknown 'nope'" in result["unknown"].content[0].text
    assert not result["alerts"].is_error and isinstance(result["alerts"].structured_content["alerts"], list)
    assert result["bad"].is_error and "window" in result["bad"].content[0].text
    slo, slo_cli = result["slo"]
    assert not slo.is_error, slo.content
    scopes = slo.structured_content["scopes"]
    # The rows of `firsttoken slo --json` (probe counts move between the two reads: compare the rest).
    assert [(s["slo"], s["scope"], s["objective"]) for s in scopes] == [
        (s["slo"], s["scope"], s["objective"]) for s in slo_cli
    ]
    assert sorted(s["scope"]["provider"] for s in scopes) == ["alt-a", "alt-b", "up-a", "up-b"]
    text = json.dumps([c.model_dump(mode="json") for r in result.values() if hasattr(r, "content") for c in r.content])
    assert API_KEY not in text


def test_stdio_session_lists_tools_and_best_routes_equals_routes_json(live_rig):
    env = {k: v for k, v in os.environ.items() if k != "FIRSTTOKEN_DATABASE_URL"}
    env["PYTHONPATH"] = str(ROOT)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "monitor", "mcp", "--config", str(live_rig.config)], env=env, cwd=ROOT
    )

    async def session() -> dict:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            return await exercise(s, live_rig)

    check(anyio.run(session))


def test_http_session_with_the_token_lists_tools_and_best_routes_equals_routes_json(live_rig):
    async def session() -> dict:
        headers = {"Authorization": f"Bearer {MCP_TOKEN}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as client,
            streamable_http_client(live_rig.base_url + "/mcp", http_client=client) as (read, write),
            ClientSession(read, write) as s,
        ):
            return await exercise(s, live_rig)

    check(anyio.run(session))


def test_http_without_or_with_a_wrong_token_is_refused(live_rig):
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}  # fmt: skip
    accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    for auth in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": MCP_TOKEN}):
        r = httpx.post(live_rig.base_url + "/mcp", json=init, headers={**accept, **auth}, timeout=10)
        assert r.status_code == 401, r.text
        assert r.headers["www-authenticate"].startswith("Bearer")
        assert MCP_TOKEN not in r.text
    ok = httpx.post(
        live_rig.base_url + "/mcp", json=init, headers={**accept, "Authorization": f"Bearer {MCP_TOKEN}"}, timeout=10
    )
    assert ok.status_code == 200, ok.text
    assert ok.json()["result"]["serverInfo"]["name"] == "firsttoken"

    initialized = []

    async def refused_session() -> None:
        async with (
            httpx2.AsyncClient(timeout=10) as client,
            streamable_http_client(live_rig.base_url + "/mcp", http_client=client) as (read, write),
            ClientSession(read, write) as s,
        ):
            initialized.append(await s.initialize())

    with pytest.raises(BaseException) as refused:  # the SDK's client gives up on the 401 (in an exception group)
        anyio.run(refused_session)
    assert not initialized and "error response" in repr(refused.value)
