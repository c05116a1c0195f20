"""The listen address's router: which endpoint answers which path.

    /mcp, /mcp/...                         the MCP tools (mcp.py), when given
    /routes                                the live ranking (routes.py), when given
    /status/subscribe, /status/confirm,
    /status/unsubscribe                    status subscriptions (monitor/subscriptions/web.py), when given
    /alerts/<id>/chart.png,
    /alerts/<id>/silence                   signed alert links: chart, one-click silence (alertlinks.py), when given
    /status, /status/<provider>            the status site's pages (statussite/serve.py)
    /status.json, /badge/<p>.svg,
    /incidents.atom                        the public status (public.py), when given
    /metrics                               Prometheus (metrics.py)
    /healthz, /health                      the service's health (health.py)

Each endpoint is a module of this package; the router only picks one. The JSON a poller reads
(/routes, /status.json) is conditional (conditional.py): an ETag, and a max-age that follows the
probe cadence (`max_age_s`; 15 s when not given).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from monitor.http.health import Health, health_response
from monitor.http.metrics import metrics_response
from monitor.http.public import public_response
from monitor.http.routes import routes_response

WsgiApp = Callable[[dict, Callable], Iterable[bytes]]
DEFAULT_MAX_AGE_S = 15
SUBSCRIPTION_PATHS = ("/status/subscribe", "/status/confirm", "/status/unsubscribe")


def build_app(
    metrics: Callable[[], list[bytes]],
    health: Callable[[], Health],
    public: Callable[[str], tuple[str, str, bytes] | None] | None = None,
    routes: Callable[[str], tuple[int, bytes]] | None = None,
    max_age_s: Callable[[], int] | None = None,
    mcp: Callable[..., Any] | None = None,
    subscriptions: WsgiApp | None = None,
    pages: Callable[[dict, Callable], list[bytes] | None] | None = None,
    alert_links: WsgiApp | None = None,
) -> WsgiApp:
    def max_age() -> int:
        return max_age_s() if max_age_s is not None else DEFAULT_MAX_AGE_S

    def app(environ, start_response):
        path = environ.get("PATH_INFO", "")
        if mcp is not None and (path == "/mcp" or path.startswith("/mcp/")):
            return mcp(environ, start_response)
        if path == "/routes" and routes is not None:
            return routes_response(environ, start_response, routes, max_age)
        if subscriptions is not None and path in SUBSCRIPTION_PATHS:
            return subscriptions(environ, start_response)
        if alert_links is not None and path.startswith("/alerts/"):
            return alert_links(environ, start_response)
        if pages is not None and (answer := pages(environ, start_response)) is not None:
            return answer
        answer = public(path) if public is not None else None
        if answer is not None:
            return public_response(environ, start_response, answer, max_age)
        if path == "/metrics":
            return metrics_response(environ, start_response, metrics())
        if path in ("/healthz", "/health"):
            return health_response(start_response, health())
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not found: try /status, /metrics, /healthz or /routes\n"]

    return app
