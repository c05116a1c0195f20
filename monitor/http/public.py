"""The public, read-only status routes of `firsttoken run --listen`: /status.json, /badge/<p>.svg,
/incidents.atom. Reads the database (rollups and alerts) at most once per CACHE_S, however many
pages embed a badge; everything shown is built by monitor.http.statuspage from values.

The public base URL (for the feed's links and the page's `url`) is FIRSTTOKEN_STATUS_URL; the
dashboard's Provider health page links to the same one.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from monitor.http import statuspage as sp
from monitor.http.conditional import conditional_response
from monitor.redact import redact

log = logging.getLogger(__name__)

CACHE_S = 15.0
WINDOW = timedelta(minutes=15)  # component status and p50 TTFT: the last 15 minutes
FEED_DAYS = 30
FEED_MAX = 50
PAGE_NAME = "firsttoken"
STATUS_URL_ENV = "FIRSTTOKEN_STATUS_URL"
_BADGE = re.compile(r"^/badge/([^/]+)\.svg$")
JSON, SVG, ATOM = "application/json", "image/svg+xml", "application/atom+xml"


@dataclass(frozen=True, slots=True)
class Snapshot:
    at: datetime
    status: sp.Status
    live: tuple[sp.Incident, ...]
    recent: tuple[sp.Incident, ...]


def public_status_url(environ=os.environ) -> str | None:
    return (environ.get(STATUS_URL_ENV) or "").strip() or None


def status_links(dashboard_url: str | None, environ=os.environ, port: int = 9464) -> str | None:
    """The public status base URL for links: FIRSTTOKEN_STATUS_URL, else the dashboard's sibling
    (same scheme and host, `firsttoken run`'s default --listen port), else None."""
    explicit = public_status_url(environ)
    if explicit:
        return explicit.rstrip("/")
    if not dashboard_url:
        return None
    parts = urlsplit(dashboard_url)
    return f"{parts.scheme}://{parts.hostname}:{port}" if parts.hostname else None


class PublicStatus:
    def __init__(self, engine, config: Callable[[], object], clock: Callable[[], datetime] = lambda: datetime.now(UTC)):
        self._engine = engine
        self._config = config
        self._clock = clock
        self._lock = threading.Lock()
        self._cached: tuple[float, Snapshot] | None = None

    def handle(self, path: str) -> tuple[str, str, bytes] | None:
        """(HTTP status line, content type, body) for a public path; None for any other path."""
        badge = _BADGE.match(path)
        if path not in ("/status.json", "/incidents.atom") and not badge:
            return None
        try:
            snap = self.snapshot()
        except Exception as exc:  # the database is down: say so, and nothing about it
            log.warning("public status unavailable: %s", type(exc).__name__)
            return "503 Service Unavailable", JSON, b'{"error": "status temporarily unavailable"}'
        url = public_status_url()
        if path == "/status.json":
            body = sp.summary(snap.status, snap.live, now=snap.at, page_name=PAGE_NAME, page_url=url)
            return "200 OK", JSON, json.dumps(body).encode()
        if path == "/incidents.atom":
            return (
                "200 OK",
                ATOM,
                sp.incidents_atom(snap.recent, now=snap.at, page_name=PAGE_NAME, page_url=url).encode(),
            )
        provider = badge.group(1)
        if provider not in snap.status.providers:
            return "404 Not Found", SVG, sp.badge_svg(provider[:40], None, None).encode()
        svg = sp.badge_svg(provider, snap.status.providers[provider], snap.status.provider_p50_ms.get(provider))
        return "200 OK", SVG, svg.encode()

    def snapshot(self) -> Snapshot:
        with self._lock:
            if self._cached and time.monotonic() - self._cached[0] < CACHE_S:
                return self._cached[1]
            snap = self._build()
            self._cached = (time.monotonic(), snap)
            return snap

    def _build(self) -> Snapshot:
        import numpy as np

        from monitor.storage.queries.alertviews import alerts_between
        from monitor.storage.queries.dashfetch import fetch_raw
        from monitor.storage.queries.histmatrix import value_quantiles

        config = self._config()
        now = self._clock()
        names = {t.id: (t.provider, t.model) for t in config.targets}
        # Raw samples, not rollups: the page is live (rollups trail by up to a minute).
        raw = fetch_raw(self._engine, now - WINDOW, now + timedelta(seconds=1), metrics=("ttft_ms",))
        n = len(raw.targets)
        measured = np.bincount(raw.target, weights=~raw.cancelled, minlength=n)
        failed = np.bincount(raw.target, weights=~raw.ok & ~raw.cancelled, minlength=n)
        p50, _ = value_quantiles(raw.metrics["ttft_ms"], raw.target, n, (0.5,))
        stats = []
        for i, target in enumerate(raw.targets):
            if target in names:  # a target no longer configured is no longer on the page
                median = float(p50[i, 0])
                stats.append(
                    sp.TargetStats(
                        *names[target], int(measured[i]), int(failed[i]), None if median != median else median
                    )
                )
        probed = set(raw.targets)
        seen = {p for p, _ in names.values()}
        for pid, (provider, model) in names.items():  # configured, never probed yet: listed, operational
            if pid not in probed:
                stats.append(sp.TargetStats(provider, model, 0, 0, None))
        alerts = alerts_between(self._engine, now - timedelta(days=FEED_DAYS), now, fired_only=True)
        incidents = [self._incident(a, config.secrets) for a in alerts if a.provider is None or a.provider in seen]
        live = tuple(i for i in incidents if i.state == "firing")
        recent = tuple(incidents[:FEED_MAX])
        return Snapshot(now, sp.compute(stats, live), live, recent)

    @staticmethod
    def _incident(a, secrets) -> sp.Incident:
        scope = "/".join(x for x in (a.provider, a.model) if x) or "all providers"
        title = redact(a.summary, secrets) if a.summary else f"{a.rule}: {scope}"
        updated = a.resolved_at or a.fired_at or a.started_at
        state = "firing" if a.state == "firing" else "resolved"
        return sp.Incident(
            a.id, a.rule, a.metric, a.provider, a.model, state, title, a.begins_at, a.resolved_at, updated
        )


def public_response(environ, start_response, answer: tuple[str, str, bytes], max_age: Callable[[], int]) -> list[bytes]:
    """The WSGI answer for `PublicStatus.handle`'s (status line, content type, body)."""
    status, content_type, body = answer
    # Embeddable anywhere (a badge in a README, status JSON from a browser page); never stale for long.
    headers = [("Content-Type", content_type), ("Access-Control-Allow-Origin", "*")]
    if status.startswith("200"):
        return conditional_response(environ, start_response, status, headers, body, max_age())
    headers += [("Content-Length", str(len(body))), ("Cache-Control", "public, max-age=15")]
    start_response(status, headers)
    return [body]
