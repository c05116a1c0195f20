"""firsttoken's GET /routes, polled in the background of a gateway (DESIGN §14).

Every `refresh_s` one conditional GET (`If-None-Match` with the last ETag: a 304 when nothing
changed); the request path never waits on it. The snapshot is dropped when it is older than
`stale_after_s` (firsttoken unreachable, or answering errors): a gateway then routes as it
would without firsttoken, never on a stale picture and never blocked.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from monitor.integrations.route_choice import RouteView, routes_from_json

log = logging.getLogger("firsttoken.routes_feed")


@dataclass(frozen=True)
class FeedSettings:
    url: str  # firsttoken run's listen address, e.g. http://firsttoken:9464
    refresh_s: float = 15.0
    window: str = "1m"  # short: a degraded route loses its rank within a minute
    min_availability: str = "99%"
    agent: str | None = None
    timeout_s: float = 2.0

    @property
    def stale_after_s(self) -> float:
        return 3 * self.refresh_s + self.timeout_s


class RoutesFeed:
    def __init__(
        self,
        settings: FeedSettings,
        *,
        clock: Callable[[], float] = time.monotonic,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.settings = settings
        self._clock = clock
        self._transport = transport
        self._routes: list[RouteView] = []
        self._etag: str | None = None
        self._fresh_at: float | None = None
        self._task: asyncio.Task | None = None
        self._client: httpx.AsyncClient | None = None
        self.fetches = 0
        self.not_modified = 0
        self._warned = False

    def current(self) -> list[RouteView] | None:
        """The routes of the last good answer, or None when there is none or it is stale."""
        if self._fresh_at is None or self._clock() - self._fresh_at > self.settings.stale_after_s:
            return None
        return self._routes

    def ensure_running(self) -> None:
        """Start polling on the running loop (the gateway's), once; a no-op outside a loop."""
        if self._task is not None and not self._task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._task = loop.create_task(self._poll(), name="firsttoken-routes-feed")

    async def refresh_once(self) -> None:
        s = self.settings
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=s.timeout_s, transport=self._transport)
        params = {"window": s.window, "min_availability": s.min_availability}
        if s.agent:
            params["agent"] = s.agent
        headers = {"If-None-Match": self._etag} if self._etag else {}
        self.fetches += 1
        try:
            response = await self._client.get(s.url.rstrip("/") + "/routes", params=params, headers=headers)
            if response.status_code == 304:
                self.not_modified += 1
            elif response.status_code == 200:
                self._routes = routes_from_json(response.json())
                self._etag = response.headers.get("etag")
            else:
                raise httpx.HTTPStatusError(f"HTTP {response.status_code}", request=response.request, response=response)
        except (httpx.HTTPError, ValueError) as exc:
            if not self._warned:  # once per outage: a dead firsttoken must not flood the gateway's log
                log.warning("firsttoken routes unavailable (%s): routing as LiteLLM would", type(exc).__name__)
                self._warned = True
            return
        self._warned = False
        self._fresh_at = self._clock()

    async def _poll(self) -> None:
        while True:
            await self.refresh_once()
            await asyncio.sleep(self.settings.refresh_s)

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._client is not None:
            await self._client.aclose()
