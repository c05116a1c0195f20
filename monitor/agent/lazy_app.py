"""A WSGI app built on its first request (/mcp): the MCP SDK costs ~1.5 s of CPU, under the GIL, to
import; a service that is never asked for MCP never pays it, and one that is pays it once, off the
probes' startup."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class LazyApp:
    def __init__(self, build: Callable[[], Any | None], unavailable: bytes) -> None:
        self._build = build
        self._unavailable = unavailable
        self._lock = threading.Lock()
        self._built = False
        self._app: Any | None = None

    def __call__(self, environ, start_response):
        app = self._get()
        if app is None:
            start_response("404 Not Found", [("Content-Type", "text/plain")])
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
