"""The listen address's server: a WSGI server on a daemon thread of its own, off the probes' loop.

`StatusServer` serves a WSGI app (the router of app.py); `ListenAddress` is what
`firsttoken run --listen` serves, wired from the service's parts: /metrics and /healthz from the
service, /routes, the public status, the status site and /mcp read the database (a read replica
when FIRSTTOKEN_READ_DATABASE_URL names one).

A crowd on the status site connects all at once: the listen backlog holds LISTEN_BACKLOG pending
connections (socketserver's default, 5, would drop the rest's SYNs into a 1 s retransmit).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

from prometheus_client.exposition import ThreadingWSGIServer

from monitor.http.alertlinks import AlertLinkPages
from monitor.http.answer_cache import AnswerCache, ttl_for
from monitor.http.app import WsgiApp, build_app
from monitor.http.conditional import max_age_s
from monitor.http.health import Health
from monitor.http.mcp import mcp_app
from monitor.http.public import PublicStatus
from monitor.http.routes import routes_handler
from monitor.http.statussite.serve import StatusPages
from monitor.http.statussite.source import SiteSource
from monitor.subscriptions.web import SubscriptionPages

LISTEN_BACKLOG = 1024  # the kernel caps it at net.core.somaxconn (4096 on current Linux)
HANDLER_THREADS = 8  # connections answered at once; the others wait their turn, accepted
CLIENT_TIMEOUT_S = 20.0  # a client silent this long mid-request gives its thread back


class _Server(ThreadingWSGIServer):
    """Connections are answered by a pool of HANDLER_THREADS threads, not a thread each: a crowd of
    500 would be 500 threads taking turns at the GIL, the accept loop and the probes' event loop
    among them (every answer here is short: the status pages are rendered ahead, /mcp is stateless)."""

    request_queue_size = LISTEN_BACKLOG

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._pool = ThreadPoolExecutor(HANDLER_THREADS, thread_name_prefix="firsttoken-http")

    def process_request(self, request, client_address) -> None:
        self._pool.submit(self.process_request_thread, request, client_address)

    def server_close(self) -> None:
        super().server_close()
        self._pool.shutdown(wait=False, cancel_futures=True)


class _QuietHandler(WSGIRequestHandler):
    timeout = CLIENT_TIMEOUT_S
    wbufsize = 1 << 16  # headers and body leave in one send, not one per header line (each a turn at the GIL)

    def log_message(self, format: str, *args: Any) -> None:  # scrapes every 15 s would flood the log
        pass


class StatusServer:
    """Serves `app` from a daemon thread; port 0 picks a free one (`port` says which)."""

    def __init__(self, host: str, port: int, app: WsgiApp) -> None:
        self._server = make_server(host, port, app, _Server, handler_class=_QuietHandler)
        self.port = self._server.server_port
        self._thread = threading.Thread(target=self._server.serve_forever, name="firsttoken-status", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class ListenAddress:
    """Everything `firsttoken run` serves on --listen. `config` returns the running config (reloads
    included): the probe cadence, the targets' endpoints and the MCP tools follow it. `engine`, the
    writable database, serves the status subscriptions (none without it)."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        metrics: Callable[[], list[bytes]],
        health: Callable[[], Health],
        read_engine,
        config: Callable[[], Any],
        engine=None,
    ) -> None:
        public = PublicStatus(read_engine, config)
        self._mcp = mcp_app(config, host, public.snapshot)

        def cadence_s() -> int:
            return max_age_s(t.interval_s for t in config().targets)

        routes = AnswerCache(
            routes_handler(read_engine, base_urls=lambda: {t.id: t.base_url for t in config().targets}),
            ttl_s=lambda: ttl_for(cadence_s()),
        )
        site = SiteSource(read_engine, config, public)
        self.pages = StatusPages(site.read, latest=site.latest)
        # Subscribing writes: the primary (`engine`), never a read replica.
        subscriptions = SubscriptionPages(engine, config) if engine is not None else None
        # DESIGN §18: the charts and one-click silences notifications link to (a silence writes: `engine`).
        alert_links = AlertLinkPages(read_engine, config, engine)
        app = build_app(
            metrics, health, public.handle, routes, max_age_s=cadence_s, mcp=self._mcp, pages=self.pages,
            subscriptions=subscriptions, alert_links=alert_links,
        )  # fmt: skip
        self._server = StatusServer(host, port, app)
        self.port = self._server.port

    def start(self) -> None:
        self._server.start()

    def stop(self) -> None:
        self._server.stop()
        self._mcp.close()
