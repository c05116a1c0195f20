"""/mcp on the listen address (DESIGN §14): the read-only MCP tools, when the `mcp` extra is installed.

A WSGI app built on its first request (`LazyApp`): the MCP SDK costs ~1.5 s of CPU, under the GIL, to
import; a service that is never asked for MCP never pays it, and one that is pays it once, off the
probes' startup. A failure to build it costs /mcp, never the service.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from monitor.addresses import is_loopback
from monitor.redact import redact

log = logging.getLogger(__name__)

UNAVAILABLE = b"not found: /mcp needs pip install 'firsttoken[mcp]'\n"
OPEN_REFUSED = (
    b"forbidden: /mcp is off: this agent listens beyond loopback and FIRSTTOKEN_MCP_TOKEN is not set "
    b"(set it, and send it as a bearer token)\n"
)


def mcp_app(config: Callable[[], Any], host: str, snapshot: Callable[[], Any]) -> LazyApp:
    """/mcp for the service whose running config `config` returns; `snapshot` is its public status's
    (monitor.http.public), so the tools and /status.json share one cached read.

    Nothing is open by default: on an address other hosts can reach, /mcp without a bearer token
    (`FIRSTTOKEN_MCP_TOKEN`) is refused, and the service says so when it starts."""
    from monitor.mcp_server.http import mcp_token

    if mcp_token() is None and not is_loopback(host):
        log.warning("/mcp is off: listening on %s needs FIRSTTOKEN_MCP_TOKEN (a bearer token)", host or "every address")
        return LazyApp(lambda: None, OPEN_REFUSED, status="403 Forbidden")
    return LazyApp(lambda: _build(config, host, snapshot), UNAVAILABLE)


def _build(config: Callable[[], Any], host: str, snapshot: Callable[[], Any]):
    try:
        from monitor.mcp_server.database import read_only_engine, read_only_url
        from monitor.mcp_server.http import McpMount, mcp_token
        from monitor.mcp_server.server import build_server
        from monitor.mcp_server.tools import Reader
    except ModuleNotFoundError as exc:
        log.info("/mcp is off: %s is not installed (pip install 'firsttoken[mcp]')", exc.name)
        return None
    current = config()
    try:
        engine = read_only_engine(read_only_url(current.database_url))
        reader = Reader(engine, snapshot, config=config, secrets=current.secrets)
        mount = McpMount(build_server(reader), host=host, token=mcp_token())
    except Exception as exc:
        log.warning("/mcp is off: %s", redact(str(exc), current.secrets).splitlines()[0][:200])
        return None
    mount.on_close(engine.dispose)
    return mount


class LazyApp:
    def __init__(self, build: Callable[[], Any | None], unavailable: bytes, status: str = "404 Not Found") -> None:
        self._build = build
        self._unavailable = unavailable
        self._status = status
        self._lock = threading.Lock()
        self._built = False
        self._app: Any | None = None

    def __call__(self, environ, start_response):
        app = self._get()
        if app is None:
            start_response(self._status, [("Content-Type", "text/plain")])
            return [self._unavailable]
        return app(environ, start_response)

    def _get(self) -> Any | None:
        with self._lock:
            if not self._built:
                self._app = self._build()  # None when it cannot be built; not retried
                self._built = True
            return self._app

    def close(self) -> None:
        with self._lock:
            app, self._built = self._app, True  # no build after close
        if app is not None and hasattr(app, "close"):
            app.close()
