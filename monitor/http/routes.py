"""GET /routes on `firsttoken run`'s listen address: the ranking of `firsttoken routes --json`,
each route also in OpenRouter's endpoint shape (DESIGN §10).

    GET /routes?model=llama-3.1-70b&prompt=short&window=30m&min_availability=99%&by=ttft
    GET /routes?agent=eu-west   (as seen from one vantage point: its samples and rollups only)

Runs on the status server's thread against the service's engine; a bad
parameter is a 400, a database that cannot answer a 503, never a crash.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit, urlunsplit

from sqlalchemy import Engine

from monitor.http.conditional import conditional_response
from monitor.routing.params import RouteParamError, parse_by, parse_floor, parse_window

log = logging.getLogger(__name__)


def routes_handler(
    engine: Engine,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    base_urls: Callable[[], dict[str, str]] | None = None,
):
    """`base_urls` (target id -> endpoint, from the running config) adds each route's `base_url`:
    what a gateway matches its own deployments' `api_base` against (monitor.integrations)."""

    def handle(query_string: str) -> tuple[int, bytes]:
        from monitor.routing import formats
        from monitor.storage.queries.routes import load_routes

        query = {k: v[-1] for k, v in parse_qs(query_string, keep_blank_values=False).items()}
        try:
            window_text = query.get("window", "30m")
            window = parse_window(window_text)
            floor = parse_floor(query.get("min_availability", "99%"))
            by = parse_by(query.get("by", "ttft"))
        except RouteParamError as exc:
            return 400, json.dumps({"error": str(exc)}).encode()
        try:
            ranked, recent = load_routes(
                engine,
                clock(),
                window,
                model=query.get("model") or None,
                prompt=query.get("prompt") or None,
                min_availability=floor,
                by=by,
                endpoint=True,
                agent=query.get("agent") or None,
            )
        except Exception as exc:  # the database may be down: say so, keep serving /metrics
            log.warning("GET /routes failed: %s", type(exc).__name__)
            return 503, json.dumps({"error": f"database unavailable: {type(exc).__name__}"}).encode()
        endpoints = base_urls() if base_urls is not None else {}
        routes = []
        for r in ranked:
            obj = formats.route_object(r)
            if r.stats.target in endpoints:
                obj["base_url"] = public_endpoint(endpoints[r.stats.target])
            if r.stats.target in recent:
                obj.update(formats.endpoint_fields(recent[r.stats.target]))
            routes.append(obj)
        body = {"window": window_text, "min_availability": floor, "by": by, "routes": routes}
        if query.get("agent"):
            body["agent"] = query["agent"]
        return 200, json.dumps(body).encode()

    return handle


def public_endpoint(url: str) -> str:
    """scheme://host[:port]/path of a configured endpoint: never its credentials or query (a key may hide there)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def routes_response(
    environ, start_response, handle: Callable[[str], tuple[int, bytes]], max_age: Callable[[], int]
) -> list[bytes]:
    """The WSGI answer: a ranking is conditional (ETag, max-age), an error is not."""
    status, body = handle(environ.get("QUERY_STRING", ""))
    headers = [("Content-Type", "application/json")]
    if status == 200:
        return conditional_response(environ, start_response, "200 OK", headers, body, max_age())
    reason = {400: "Bad Request"}.get(status, "Service Unavailable")
    start_response(f"{status} {reason}", [*headers, ("Content-Length", str(len(body)))])
    return [body]
