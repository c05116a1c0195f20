"""`callback_settings.firsttoken` of a LiteLLM proxy config, checked (no LiteLLM import: testable anywhere). Pure."""

from __future__ import annotations

import os
from typing import Any

from monitor import envvars
from monitor.integrations.route_choice import DEFAULT_SLACK
from monitor.integrations.routes_feed import FeedSettings
from monitor.routing.params import RouteParamError, parse_floor, parse_window

SETTINGS_KEY = "firsttoken"
ENV_URL = envvars.URL
KEYS = ("url", "refresh_s", "window", "min_availability", "agent", "prompt", "slack", "timeout_s")


class SettingsError(ValueError):
    """`callback_settings.firsttoken` is unusable; the message names the key."""


def settings_from(raw: Any, environ=os.environ) -> tuple[FeedSettings, str | None, float]:
    """(feed settings, prompt, slack) from `callback_settings.firsttoken` and FIRSTTOKEN_URL."""
    where = f"callback_settings.{SETTINGS_KEY}"
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise SettingsError(f"{where}: a mapping of url, refresh_s, window")
    unknown = set(raw) - set(KEYS)
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
    for key, parse in (("window", parse_window), ("min_availability", parse_floor)):
        if key in raw:
            try:
                parse(str(raw[key]))
            except RouteParamError as exc:
                raise SettingsError(f"{where}.{key}: {str(exc).split(': ', 1)[-1]}") from None
    feed = FeedSettings(
        url=url,
        refresh_s=numbers["refresh_s"],
        window=str(raw.get("window", "1m")),
        min_availability=str(raw.get("min_availability", "99%")),
        agent=raw.get("agent"),
        timeout_s=numbers["timeout_s"],
    )
    return feed, raw.get("prompt"), numbers["slack"]
