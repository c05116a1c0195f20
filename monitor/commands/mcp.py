"""`firsttoken mcp`: the read-only MCP server over stdio, for desktop and coding agents (DESIGN §14).

    firsttoken mcp [--config firsttoken.yaml]

An MCP client starts it as a subprocess and talks JSON-RPC on its stdin and stdout; logs
go to stderr. The tools read the database the config names (on the read-only role where
FIRSTTOKEN_MCP_DATABASE_URL or FIRSTTOKEN_DASHBOARD_DATABASE_URL gives one), never write.
"""

from __future__ import annotations

import argparse
import os
import sys

from monitor.commands import DEFAULT_CONFIG
from monitor.errors import UsageError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--transport", choices=("stdio",), default="stdio", help="stdio (HTTP is at /mcp on `firsttoken run`)"
    )


def run(args: argparse.Namespace) -> int:
    try:
        from monitor.mcp_server.server import build_server
    except ModuleNotFoundError as exc:
        raise UsageError(f"firsttoken mcp: {exc.name} is not installed: pip install 'firsttoken[mcp]'") from None
    from monitor.commands.db import SchemaNotReady, database_url_for
    from monitor.mcp_server.database import read_only_engine, read_only_url
    from monitor.mcp_server.tools import Reader
    from monitor.storage.migrate import check_schema

    config = _config(args)
    engine = read_only_engine(read_only_url(database_url_for(args)))
    try:
        problem = check_schema(engine)
        if problem:
            raise SchemaNotReady(problem)
        snapshot = None
        if config is not None:
            from monitor.http.public import PublicStatus

            snapshot = PublicStatus(engine, lambda: config).snapshot
        reader = Reader(
            engine,
            snapshot,
            config=None if config is None else (lambda: config),
            secrets=config.secrets if config is not None else (),
        )
        build_server(reader).run("stdio")
    except SchemaNotReady as exc:
        print(f"firsttoken: {exc}", file=sys.stderr)
        return 1
    finally:
        engine.dispose()
    return 0


def _config(args: argparse.Namespace):
    """The config when there is one (provider_status needs its targets); routes and alerts need only the database."""
    path = getattr(args, "config", DEFAULT_CONFIG)
    if path == DEFAULT_CONFIG and not os.path.exists(path):
        return None
    from monitor.config import load_config

    return load_config(path)
