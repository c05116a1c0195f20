"""The public, read-only status routes of `firsttoken run --listen`: /status.json, /badge/<p>.svg,
/incidents.atom. Reads the database (raw samples, alerts, maintenance windows, incidents) at most once per
CACHE_S, however many pages embed a badge; everything shown is built by monitor.http.statuspage
from values. The HTML status site (monitor.http.statussite) shows the same snapshot.

Only what the quorum of vantage points confirms is public (DESIGN §11, §16): a component's
availability counts the minutes the quorum saw fail (`monitor.availability`), and only alerts the
quorum confirmed (`AlertView.quorum_confirmed`) move a component or make an incident; an alert a
maintenance window muted is planned work, not an incident, and an inhibited one repeats its
inhibitor's incident. The components are the configured targets `status_site.components` takes.

The public base URL (for the feed's links and the page's `url`) is `status_site.url`, else
FIRSTTOKEN_STATUS_URL; the dashboard's Provider health page links to the same one.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from fnmatch import fnmatchcase
from urllib.parse import urlsplit

from monitor import envvars
from monitor.http import planned
from monitor.http import statuspage as sp
from monitor.http.conditional import conditional_response

log = logging.getLogger(__name__)

CACHE_S = 15.0
WINDOW = timedelta(minutes=15)  # component status and p50 TTFT: the last 15 minutes
FEED_DAYS = 30
FEED_MAX = 50
STATUS_URL_ENV = envvars.STATUS_URL
_BADGE = re.compile(r"^/badge/([^/]+)\.svg$")
JSON, SVG, ATOM = "application/json", "image/svg+xml", "application/atom+xml"


@dataclass(frozen=True, slots=True)
class Snapshot:
    at: datetime
    status: sp.Status
    live: tuple[sp.Incident, ...]  # the quorum's alerts firing now (not inhibited): the MCP tools' incidents
    maintenance: tuple[sp.Maintenance, ...] = ()  # now and the next 7 days
    title: str = "LLM provider status"
    url: str | None = None  # the public base URL, when known
    published: tuple = ()  # our published incidents and their published updates (monitor.incidents)


def public_status_url(environ=os.environ, site_url: str | None = None) -> str | None:
    """The config's `status_site.url` (`site_url`), else FIRSTTOKEN_STATUS_URL."""
    if site_url:
        return str(site_url).rstrip("/")
    return (environ.get(STATUS_URL_ENV) or "").strip().rstrip("/") or None


def status_links(
    dashboard_url: str | None, environ=os.environ, port: int = 9464, site_url: str | None = None
) -> str | None:
    """The public status base URL for links: `status_site.url`, FIRSTTOKEN_STATUS_URL, else the
    dashboard's sibling (same scheme and host, `firsttoken run`'s default --listen port), else None."""
    explicit = public_status_url(environ, site_url)
    if explicit:
        return explicit
    if not dashboard_url:
        return None
    parts = urlsplit(dashboard_url)
    return f"{parts.scheme}://{parts.hostname}:{port}" if parts.hostname else None


def shown_targets(config) -> list:
    """The configured targets the public status shows: those `status_site.components` globs take."""
    globs = config.status_site.components
    return [t for t in config.targets if any(fnmatchcase(t.id, g) for g in globs)]


def public_alerts(alerts: Sequence, targets: Sequence) -> list:
    """The alerts the public may see: confirmed by the quorum, not muted by maintenance, on a shown
    component (a provider- or model-wide alert: on one of them)."""
    shown = {(t.provider, t.model) for t in targets}

    def on_shown(a) -> bool:
        return any(a.provider in (None, p) and a.model in (None, m) for p, m in shown)

    return [a for a in alerts if a.quorum_confirmed and a.muted != "maintenance" and on_shown(a)]


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
        if path == "/status.json":
            return "200 OK", JSON, status_json(snap)
        if path == "/incidents.atom":
            return "200 OK", ATOM, atom_feed(snap)
        return badge_answer(snap, badge.group(1))

    def latest(self) -> Snapshot | None:
        """The snapshot last built, without building one (None before the first)."""
        cached = self._cached
        return None if cached is None else cached[1]

    def snapshot(self) -> Snapshot:
        with self._lock:
            if self._cached and time.monotonic() - self._cached[0] < CACHE_S:
                return self._cached[1]
            snap = self._build()
            self._cached = (time.monotonic(), snap)
            return snap

    def _build(self) -> Snapshot:
        from monitor.incidents.views import public_incidents
        from monitor.storage.queries import statushistory
        from monitor.storage.queries.alertviews import live_alerts

        config = self._config()
        now = self._clock()
        targets = shown_targets(config)
        windows = planned.windows_between(self._engine, config, now - WINDOW, now + planned.AHEAD)
        excluded = planned.excluded(windows, targets)
        # Raw samples, not rollups: the page is live (rollups trail by up to a minute).
        figures = statushistory.live(
            self._engine, now - WINDOW, now + timedelta(seconds=1), [t.id for t in targets], excluded
        )
        stats = []
        for i, t in enumerate(targets):
            median = float(figures.ttft_p50_ms[i])
            p50 = None if median != median else median
            stats.append(
                sp.TargetStats(t.provider, t.model, float(figures.probed_min[i]), float(figures.down_min[i]), p50)
            )
        shown = [a for a in public_alerts(live_alerts(self._engine), targets) if a.state == "firing"]
        firing = [self._incident(a) for a in shown]
        status = sp.compute(stats, firing, planned.under_maintenance(windows, targets, now))
        with self._engine.connect() as conn:
            published = public_incidents(conn, now - timedelta(days=FEED_DAYS), limit=FEED_MAX)
        return Snapshot(
            now,
            status,
            tuple(self._incident(a) for a in shown if a.inhibited_by is None),
            planned.notices(windows, targets, now),
            config.status_site.title,
            public_status_url(site_url=config.status_site.url),
            tuple(published),
        )

    @staticmethod
    def _incident(a) -> sp.Incident:
        """A firing alert, as much of it as may be public (its title from values, no summary)."""
        title = sp.public_title(a.metric, a.provider, a.model)
        return sp.Incident(
            a.id, a.rule, a.metric, a.provider, a.model, "firing", title, a.begins_at, None, a.fired_at or a.started_at
        )


def status_json(snap: Snapshot) -> bytes:
    """The Statuspage v2 summary: components by the quorum, our published incidents (DESIGN §16: with
    `publish: manual` a drafted incident is not public until published), maintenance."""
    body = sp.summary(
        snap.status,
        now=snap.at,
        page_name=snap.title,
        page_url=snap.url,
        maintenances=snap.maintenance,
        published=snap.published,
    )
    return json.dumps(body).encode()


def atom_feed(snap: Snapshot) -> bytes:
    """Our published incidents with their published updates (DESIGN §16), newest first."""
    from monitor.incidents.feed import incidents_atom

    return incidents_atom(snap.published, now=snap.at, title=snap.title, site_url=snap.url).encode()


def badge_answer(snap: Snapshot, provider: str) -> tuple[str, str, bytes]:
    if provider not in snap.status.providers:
        return "404 Not Found", SVG, sp.badge_svg(provider[:40], None, None).encode()
    svg = sp.badge_svg(provider, snap.status.providers[provider], snap.status.provider_p50_ms.get(provider))
    return "200 OK", SVG, svg.encode()


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
