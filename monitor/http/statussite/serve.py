"""/status and /status/<provider> on the listen address, built for a crowd.

A crowd arrives exactly when a provider is down (DESIGN §16). So the pages are rendered at most
once per RENDER_TTL_S, all together, by one background thread while every request is answered from
the last render (500 concurrent clients cost one render, and none waits for it), and each page is
gzipped once then. Only pages too old to show (MAX_STALE_S: nobody asked for a while) are waited for.
Every answer carries a strong ETag per encoding (a reload answers 304 with no body),
`Cache-Control: public, max-age=RENDER_TTL_S` (a CDN or proxy in front absorbs the rest) and
`Vary: Accept-Encoding`. When a render fails (the database is away), the last good pages go on
being served, their "updated" time saying how old they are; with none yet, a 503 page.

Other methods and paths under /status/ (the subscription routes) are not answered here: `__call__`
returns None and the router goes on.
"""

from __future__ import annotations

import gzip
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from monitor.http.conditional import etag_for, matches
from monitor.http.statussite.render import SERVED, site_pages

log = logging.getLogger(__name__)

RENDER_TTL_S = 10.0
MAX_STALE_S = 60.0  # older pages are not shown while a fresh render is under way: it is waited for
GZIP_LEVEL = 6
UNAVAILABLE = (
    b"<!doctype html><html lang=en><meta charset=utf-8><title>Status unavailable</title>"
    b"<main><h1>Status temporarily unavailable</h1><p>Please try again in a minute.</p></main></html>"
)


@dataclass(frozen=True)
class Prepared:
    """One page, ready for any client: its bytes plain and gzipped, and the ETag of each."""

    content_type: str
    body: bytes
    gzipped: bytes
    etag: str
    etag_gzip: str

    @classmethod
    def of(cls, content_type: str, body: bytes) -> Prepared:
        tag = etag_for(body)
        return cls(content_type, body, gzip.compress(body, GZIP_LEVEL, mtime=0), tag, tag[:-1] + '-gz"')


def accepts_gzip(header: str | None) -> bool:
    """Does an Accept-Encoding header take gzip (named, or `*`, and not with q=0)?"""
    for part in (header or "").split(","):
        name, *params = (x.strip() for x in part.split(";"))
        if name.lower() not in ("gzip", "*"):
            continue
        q = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        return q > 0
    return False


class StatusPages:
    """The WSGI side of the site; `read` returns (snapshot, view.Site) (`SiteSource.read`).

    Pages older than `ttl_s` are re-rendered by one background thread while every request goes on
    getting the ones it has (a crowd, which keeps them fresh, never waits for the database). Pages
    older than MAX_STALE_S (nobody asked for a while) or none yet are waited for: one render, by
    the first request, the others arriving meanwhile waiting for it. Pages behind the newest public
    snapshot (`latest`: /status.json or a badge built it) are rendered again by the request that
    finds them so, unless a render is under way: the pages never say less than status.json for
    longer than a render (milliseconds: the snapshot is built, the history read). A failed render
    leaves the last good pages in place and is tried again after another TTL."""

    def __init__(
        self,
        read: Callable[[], tuple],
        ttl_s: float = RENDER_TTL_S,
        clock: Callable[[], float] = time.monotonic,
        max_stale_s: float = MAX_STALE_S,
        latest: Callable[[], object] | None = None,
    ) -> None:
        self._read = read
        self._latest = latest
        self._shown: object | None = None  # the snapshot the pages show
        self._ttl_s = ttl_s
        self._max_stale_s = max_stale_s
        self._clock = clock
        self._lock = threading.Lock()  # held by the one render under way
        self._pages: dict[str, Prepared] | None = None
        self._at = float("-inf")
        self._retry_at = float("-inf")
        self._worker: threading.Thread | None = None
        self.renders = 0

    def pages(self) -> dict[str, Prepared]:
        """The current pages by path (`status`, `status/<provider>`)."""
        now, pages = self._clock(), self._pages
        if pages is not None and now >= self._retry_at and self._behind() and self._lock.acquire(blocking=False):
            try:  # /status.json already says more and no render is under way: follow it now
                self._try_render()
            finally:
                self._lock.release()
            return self._pages
        if pages is not None and (now - self._at < self._ttl_s or now < self._retry_at):
            return pages
        if pages is not None and now - self._at < self._max_stale_s:
            self.refresh()
            return pages
        return self._render_now()

    def _behind(self) -> bool:
        """Is there a newer public snapshot than the pages show (built for /status.json or a badge)?"""
        if self._latest is None:
            return False
        latest = self._latest()
        return latest is not None and latest is not self._shown

    def _render_now(self) -> dict[str, Prepared]:
        """Wait for a render, one for everyone: there are no pages yet, or none fit to show."""
        with self._lock:
            if self._pages is not None and self._clock() - self._at < self._ttl_s:
                return self._pages  # rendered while this request waited
            self._try_render()
            return self._pages

    def _try_render(self) -> None:
        """Render (the caller holds the lock); a failure keeps the last pages, if any."""
        try:
            self._render()
        except Exception:
            if self._pages is None:
                raise
            self._failed()

    def refresh(self) -> threading.Thread | None:
        """Re-render in the background unless a render is under way; the thread, for whoever waits."""
        if not self._lock.acquire(blocking=False):
            return None

        def work() -> None:
            try:
                self._render()
            except Exception:
                self._failed()
            finally:
                self._lock.release()

        self._worker = threading.Thread(target=work, name="firsttoken-status-render", daemon=True)
        self._worker.start()
        return self._worker

    def _render(self) -> None:
        """Read, render and gzip every page (the caller holds the lock)."""
        snapshot, site = self._read()
        fresh = {path: Prepared.of(f.content_type, f.body) for path, f in site_pages(site, SERVED).items()}
        self.renders += 1
        self._pages, self._at, self._shown = fresh, self._clock(), snapshot

    def _failed(self) -> None:
        log.warning("status pages not refreshed, serving the last ones", exc_info=log.isEnabledFor(logging.DEBUG))
        self._retry_at = self._clock() + self._ttl_s

    def __call__(self, environ, start_response) -> list[bytes] | None:
        path = environ.get("PATH_INFO", "")
        if path != "/status" and not path.startswith("/status/"):
            return None
        if environ.get("REQUEST_METHOD", "GET") not in ("GET", "HEAD"):
            return None
        if path.endswith("/"):  # relative links assume /status and /status/<provider>
            target = path.rstrip("/") or "/status"
            start_response("301 Moved Permanently", [("Location", target), ("Content-Length", "0")])
            return []
        try:
            pages = self.pages()
        except Exception as exc:
            log.warning("status pages unavailable: %s", type(exc).__name__)
            start_response(
                "503 Service Unavailable",
                [("Content-Type", "text/html; charset=utf-8"), ("Retry-After", "30"), ("Cache-Control", "no-store"),
                 ("Content-Length", str(len(UNAVAILABLE)))],
            )  # fmt: skip
            return [UNAVAILABLE]
        page = pages.get(path.lstrip("/"))
        if page is None:
            return None
        return respond(environ, start_response, page, int(self._ttl_s))


def respond(environ, start_response, page: Prepared, max_age: int) -> list[bytes]:
    zipped = accepts_gzip(environ.get("HTTP_ACCEPT_ENCODING"))
    body, tag = (page.gzipped, page.etag_gzip) if zipped else (page.body, page.etag)
    headers = [
        ("Content-Type", page.content_type),
        ("ETag", tag),
        ("Cache-Control", f"public, max-age={max_age}"),
        ("Vary", "Accept-Encoding"),
    ]
    if matches(environ.get("HTTP_IF_NONE_MATCH"), tag):
        start_response("304 Not Modified", [h for h in headers if h[0] != "Content-Type"])
        return []
    if zipped:
        headers.append(("Content-Encoding", "gzip"))
    headers.append(("Content-Length", str(len(body))))
    start_response("200 OK", headers)
    return [] if environ.get("REQUEST_METHOD") == "HEAD" else [body]
