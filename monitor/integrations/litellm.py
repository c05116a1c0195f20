"""A LiteLLM proxy callback that routes on firsttoken's live ranking (DESIGN §14).

In the proxy's config:

    litellm_settings:
      callbacks: [monitor.integrations.litellm.handler]
    callback_settings:
      firsttoken: {url: "http://firsttoken:9464", refresh_s: 15, window: 1m}

(`url` may come from FIRSTTOKEN_URL instead.) The hook is `async_filter_deployments`, which
LiteLLM's router runs after cooldowns and before the `order` filter and the routing strategy:
it narrows a model group's healthy deployments to firsttoken's best-ranked ones and drops
those firsttoken sees failing (monitor.integrations.route_choice), from a snapshot of GET
/routes refreshed in the background (monitor.integrations.routes_feed). Unreachable, stale or
ignorant of a group, it hands LiteLLM's own list back untouched.
"""

from __future__ import annotations

import logging
from typing import Any

from litellm.integrations.custom_logger import CustomLogger

from monitor.integrations.litellm_settings import SETTINGS_KEY, SettingsError, settings_from
from monitor.integrations.route_choice import DEFAULT_SLACK, choose
from monitor.integrations.routes_feed import RoutesFeed

log = logging.getLogger("firsttoken.litellm")


class FirsttokenRouting(CustomLogger):
    """Narrows each model group to the routes firsttoken ranks best right now."""

    def __init__(self, raw_settings: dict | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._raw = raw_settings
        self._feed: RoutesFeed | None = None
        self._prompt: str | None = None
        self._slack = DEFAULT_SLACK
        self._disabled = False

    def _ensure_feed(self) -> RoutesFeed | None:
        if self._feed is None and not self._disabled:
            import litellm

            raw = (
                self._raw
                if self._raw is not None
                else (getattr(litellm, "callback_settings", None) or {}).get(SETTINGS_KEY)
            )
            try:
                settings, self._prompt, self._slack = settings_from(raw)
            except SettingsError as exc:
                log.error("firsttoken routing is off: %s", exc)
                self._disabled = True
                return None
            self._feed = RoutesFeed(settings)
            log.info(
                "firsttoken routing on: %s every %.0f s, window %s", settings.url, settings.refresh_s, settings.window
            )
        if self._feed is not None:
            self._feed.ensure_running()
        return self._feed

    async def async_filter_deployments(
        self,
        model: str,
        healthy_deployments: list,
        messages: Any = None,
        request_kwargs: dict | None = None,
        parent_otel_span: Any = None,
    ) -> list[dict]:
        try:
            feed = self._ensure_feed()
            routes = feed.current() if feed is not None else None
            if not routes or not healthy_deployments:
                return healthy_deployments
            return choose(healthy_deployments, routes, prompt=self._prompt, slack=self._slack)
        except Exception:  # a bug here must cost a routing preference, never a request
            log.exception("firsttoken routing failed; LiteLLM's own choice stands")
            return healthy_deployments


handler = FirsttokenRouting()
