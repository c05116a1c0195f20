"""Deep links from a notification to the dashboard view of the alert (pure: values in, a URL out).

    alert_url("https://mon.example.com", alert_id=42, scope=scope.labels(), started_at=..., resolved_at=None)
    -> https://mon.example.com/target?target=openai%2Fgpt-4o%40us%3Ashort&from=2026-12-01T09:40Z&alert=42

A target's alert opens that target's page; a provider-region alert opens
Trends filtered to the provider and region. The window runs from a margin
before the alert started to a margin after it resolved; a firing alert's link
has no end, so it shows up to whenever it is opened. `alert=` marks the alert
on the page. No base configured (`dashboard_url` unset): no link.

Query parameter names are the dashboard's (dashboard/urlstate.py); the two
meet only here and in the pages, and the browser test holds them together.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

TIME_FORMAT = "%Y-%m-%dT%H:%MZ"  # dashboard.urlstate.TIME_FORMAT
MIN_MARGIN = timedelta(minutes=30)
MARGIN_SHARE = 0.25  # of the alert's duration, when that is longer


def _minute(moment: datetime, up: bool = False) -> str:
    moment = moment.astimezone(UTC)
    floor = moment.replace(second=0, microsecond=0)
    if up and floor < moment:
        floor += timedelta(minutes=1)
    return floor.strftime(TIME_FORMAT)


def window(started_at: datetime, resolved_at: datetime | None, now: datetime | None = None) -> tuple[str, str | None]:
    """(from, to or None) around an alert, as the dashboard's `from`/`to` parameters."""
    end = resolved_at or now or started_at
    margin = max(MIN_MARGIN, MARGIN_SHARE * (end - started_at))
    start = _minute(started_at - margin)
    return start, None if resolved_at is None else _minute(resolved_at + margin, up=True)


def alert_url(
    base: str | None,
    *,
    alert_id: int,
    scope: Mapping[str, str | None],
    started_at: datetime,
    resolved_at: datetime | None = None,
) -> str | None:
    """The dashboard view of one alert, or None when no dashboard URL is configured."""
    if not base:
        return None
    start, end = window(started_at, resolved_at)
    if scope.get("model") is not None:
        page = "target"
        target = f"{scope['provider']}/{scope['model']}@{scope['region']}:{scope['prompt']}"
        params: list[tuple[str, str]] = [("target", target)]
        if scope.get("agent") is not None:  # one vantage point's alert: draw a line per agent
            params.append(("agents", "true"))
    elif scope.get("provider") is None:  # one agent's path (DESIGN §11): every target, a line per agent
        page = "trends"
        params = [("split", "agent")]
    else:  # a whole provider in a region: every model and prompt of it
        page = "trends"
        params = [("provider", str(scope.get("provider"))), ("model", "*"), ("region", str(scope.get("region")))]
        params.append(("prompt", "*"))
    params.append(("from", start))
    if end is not None:
        params.append(("to", end))
    params.append(("alert", str(alert_id)))
    return f"{base.rstrip('/')}/{page}?{urlencode(params)}"
