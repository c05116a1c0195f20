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
import os
from typing import Any

from litellm.integrations.custom_logger import CustomLogger

from monitor.integrations.route_choice import DEFAULT_SLACK, choose
from monitor.integrations.routes_feed import FeedSettings, RoutesFeed

log = logging.getLogger("firsttoken.litellm")

SETTINGS_KEY = "firsttoken"
ENV_URL = "FIRSTTOKEN_URL"


class SettingsError(ValueError):
    """`callback_settings.firsttoken` is unusable; the message names the key."""


def settings_from(raw: Any, environ=os.environ) -> tuple[FeedSettings, str | None, float]:
    """(feed settings, prompt, slack) from `callback_settings.firsttoken` and FIRSTTOKEN_URL."""
    where = f"callback_settings.{SETTINGS_KEY}"
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise SettingsError(f"{where}: a mapping of url, refresh_s, window")
    unknown = set(raw) - {"url", "refresh_s", "window", "min_availability", "agent", "prompt", "slack", "timeout_s"}
    if unknown:
        raise SettingsError(f"{where}.{sorted(unknown)[0]}: unknown key")
    url = str(raw.get("url") or environ.get(ENV_URL) or "").strip()
    if not url.startswith(("http://", "https://")):
        raise SettingsError(f"{where}.url: firsttoken's listen address as http(s)://host:port (or set {ENV_URL})")
    numbers = {}
    for key, default in (("refresh_s", 15.0), ("timeout_s", 2.0), ("slack", DEFAULT_SLACK)):
        try:
            numbers[key] = float(raw.get(key, default))
        except (TypeError, ValueError):
            raise SettingsError(f"{where}.{key}: a number") from None
        if numbers[key] < 0 or (key != "slack" and numbers[key] == 0):
            raise SettingsError(f"{where}.{key}: must be positive")
    feed = FeedSettings(
        url=url,
        refresh_s=numbers["refresh_s"],
        window=str(raw.get("window", "1m")),
        min_availability=str(raw.get("min_availability", "99%")),
        agent=raw.get("agent"),
        timeout_s=numbers["timeout_s"],
    )
    return feed, raw.get("prompt"), numbers["slack"]


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
