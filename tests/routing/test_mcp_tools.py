"""The MCP tools through the SDK's in-memory client: typed errors, and a database outage that says
so without the URL or its password."""

from __future__ import annotations

import anyio
from mcp import Client

from monitor.mcp_server.database import read_only_engine
from monitor.mcp_server.server import build_server
from monitor.mcp_server.tools import Reader
from tests.net import free_port


def call(server, name: str, arguments: dict):
    async def run():
        async with Client(server) as client:
            return await client.call_tool(name, arguments)

    return anyio.run(run)


def test_a_database_outage_is_a_tool_error_naming_no_url_or_password():
    url = f"postgresql+psycopg://reader:hunter2-secret@127.0.0.1:{free_port()}/firsttoken"
    engine = read_only_engine(url)
    try:
        server = build_server(Reader(engine))
        for name, arguments in (("best_routes", {"model": "m"}), ("recent_alerts", {"since": "1h"})):
            result = call(server, name, arguments)
            text = result.content[0].text
            assert result.is_error and "database unavailable: OperationalError" in text, text
            assert "hunter2" not in text and "127.0.0.1" not in text
    finally:
        engine.dispose()


def test_bad_arguments_are_refused_with_their_name():
    server = build_server(Reader(engine=None))
    assert (
        "min_availability: must be between" in call(server, "best_routes", {"min_availability": "150%"}).content[0].text
    )
    assert "since" in call(server, "recent_alerts", {"since": "yesterday"}).content[0].text
    refused = call(server, "best_routes", {"by": "vibes"})
    assert refused.is_error
    assert "config" in call(server, "provider_status", {"provider": "groq"}).content[0].text  # no config: says so


def test_bad_configuration_exits_2_with_one_line_naming_it(tmp_path):
    import subprocess
    import sys

    bad = tmp_path / "bad.yaml"
    bad.write_text("providers: 5\n")
    for argv, expected in (
        (["mcp", "--config", str(bad)], f"{bad}: providers: expected a mapping"),
        (["routes", "--watch", "soon", "--config", str(bad)], "firsttoken routes: --watch: a poll interval"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "monitor", *argv], capture_output=True, text=True, stdin=subprocess.DEVNULL
        )
        assert done.returncode == 2 and done.stderr.startswith(expected) and done.stderr.count("\n") == 1, done.stderr
