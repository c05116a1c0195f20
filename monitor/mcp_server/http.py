"""Streamable HTTP at /mcp on `firsttoken run`'s listen address.

The status server is a WSGI server on a thread of its own (monitor.http.server); the SDK's
transport is ASGI. `a2wsgi` bridges the two onto an event loop running on one more daemon
thread, where the SDK's session manager lives for the service's lifetime. The transport runs
stateless with plain JSON responses: every POST is one request and one answer, which a
load balancer or a second replica can serve as well as the first.

FIRSTTOKEN_MCP_TOKEN, when set, is a bearer token every request must carry
(`Authorization: Bearer <token>`); anything else is a 401 that says only that.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import os
import threading
from collections.abc import Callable
from typing import Any

from monitor import envvars

log = logging.getLogger(__name__)

ENV_TOKEN = envvars.MCP_TOKEN
_UNAUTHORIZED = json.dumps({"error": "unauthorized: send Authorization: Bearer <FIRSTTOKEN_MCP_TOKEN>"}).encode()


def mcp_token(environ=os.environ) -> str | None:
    return (environ.get(ENV_TOKEN) or "").strip() or None


def bearer_guard(app: Callable, token: str | None) -> Callable:
    """An ASGI wrapper refusing any HTTP request without the bearer token (when one is set)."""
    if token is None:
        return app
    expected = f"Bearer {token}".encode()

    async def guarded(scope, receive, send):
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not hmac.compare_digest(given, expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="firsttoken"'),
                            (b"content-length", str(len(_UNAUTHORIZED)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": _UNAUTHORIZED})
                return
        await app(scope, receive, send)

    return guarded


class McpMount:
    """The /mcp WSGI app, and the loop thread behind it. `close()` ends both."""

    def __init__(self, server, *, host: str, token: str | None) -> None:
        from a2wsgi import ASGIMiddleware

        asgi = server.streamable_http_app(
            streamable_http_path="/mcp", stateless_http=True, json_response=True, host=host
        )
        self._manager = server.session_manager
        self._loop = asyncio.new_event_loop()
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._closers: list[Callable[[], object]] = []
        self._thread = threading.Thread(target=self._run, name="firsttoken-mcp", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the MCP session manager did not start")
        self.wsgi = ASGIMiddleware(bearer_guard(asgi, token), loop=self._loop)

    def __call__(self, environ, start_response) -> Any:
        return self.wsgi(environ, start_response)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._serve())

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        async with self._manager.run():  # the task group every request runs in (the ASGI lifespan's job)
            self._ready.set()
            await self._stop.wait()

    def on_close(self, fn: Callable[[], object]) -> None:
        self._closers.append(fn)

    def close(self) -> None:
        if self._stop is not None and self._loop.is_running():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=5)
        for fn in self._closers:
            fn()
