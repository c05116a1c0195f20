"""Providers' official status pages (`providers.<p>.status_page:`, a Statuspage v2 summary JSON URL),
polled by the leader.

`parse_summary` takes values; `poll_status_pages` is the leader job (its edge: one GET per
configured page, then the database). Which of them one of our alerts matches, and how far ahead of
(or behind) it our alert fired: monitor.official.match.

Beside the summary the job reads the page's scheduled maintenances (DESIGN §16): the
`scheduled-maintenances.json` next to the configured `summary.json` (or, if that fails or the URL
has another shape, the summary's own `scheduled_maintenances`, the upcoming and running ones). Each
is stored as a maintenance window of source `provider` over the whole provider
(monitor.maintenance.store). They are shown on the status site and by `firsttoken maintenance list`;
they mute no page and leave SLO budgets alone: a provider's planned work is still downtime for
whoever calls it, and it is their plan, not ours (add a window of our own to mute through it).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from monitor.maintenance.store import ProviderMaintenance
from monitor.redact import host_of
from monitor.storage.queries.official import OfficialIncident

log = logging.getLogger(__name__)

POLL_EVERY_S = 120.0
TIMEOUT_S = 10.0
MAX_BYTES = 2_000_000
MAX_MAINTENANCES = 200  # per page and poll: the newest the page lists
BESIDE = "scheduled-maintenances.json"
SUMMARY_NAMES = ("summary.json", "incidents.json", "unresolved.json", "status.json", "components.json")


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def parse_summary(provider: str, data: Any) -> list[OfficialIncident]:
    """The incidents of a Statuspage v2 `summary.json` (or `incidents.json`) document."""
    if not isinstance(data, Mapping) or not isinstance(data.get("incidents"), list):
        raise ValueError("not a Statuspage v2 summary: no incidents list")
    out = []
    for raw in data["incidents"]:
        if not isinstance(raw, Mapping) or not raw.get("id"):
            continue
        started = _time(raw.get("started_at")) or _time(raw.get("created_at"))
        if started is None:
            continue
        status = str(raw.get("status") or "investigating")
        resolved = _time(raw.get("resolved_at"))
        if resolved is None and status in ("resolved", "postmortem"):
            resolved = _time(raw.get("updated_at")) or started
        out.append(
            OfficialIncident(
                provider=provider,
                source_id=str(raw["id"])[:200],
                name=str(raw.get("name") or "incident")[:500],
                status=status[:40],
                impact=str(raw["impact"])[:40] if raw.get("impact") else None,
                started_at=started,
                resolved_at=resolved,
                updated_at=_time(raw.get("updated_at")) or started,
                shortlink=str(raw["shortlink"])[:500] if raw.get("shortlink") else None,
            )
        )
    return out


def parse_maintenances(data: Any) -> list[ProviderMaintenance]:
    """The scheduled maintenances of a Statuspage v2 `scheduled-maintenances.json` (or `summary.json`)
    document: each with its planned start and end, cut short when it completed early; one without
    both times, or that ended before it began, is left out."""
    if not isinstance(data, Mapping) or not isinstance(data.get("scheduled_maintenances"), list):
        raise ValueError("not a Statuspage v2 document: no scheduled_maintenances list")
    out = []
    for raw in data["scheduled_maintenances"][:MAX_MAINTENANCES]:
        if not isinstance(raw, Mapping) or not raw.get("id"):
            continue
        starts, ends = _time(raw.get("scheduled_for")), _time(raw.get("scheduled_until"))
        if starts is None or ends is None:
            continue
        resolved = _time(raw.get("resolved_at"))
        if raw.get("status") == "completed" and resolved is not None:
            ends = min(ends, resolved)
        if ends <= starts:
            continue
        name = str(raw.get("name") or "scheduled maintenance")[:500]
        out.append(ProviderMaintenance(str(raw["id"])[:200], name, starts, ends, name))
    return out


def maintenances_url(summary_url: str) -> str | None:
    """`.../api/v2/scheduled-maintenances.json` beside a Statuspage v2 `summary.json` URL (or another
    document of the same API); None for a URL of another shape."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(summary_url)
    head, _, last = parts.path.rpartition("/")
    if last not in SUMMARY_NAMES:
        return None
    return urlunsplit(parts._replace(path=f"{head}/{BESIDE}"))


def _maintenances(client, summary_url: str, summary: Any) -> list[ProviderMaintenance] | None:
    """The page's scheduled maintenances, from beside the summary or from the summary itself; None
    when neither says (the stored ones then stay as they are)."""
    url = maintenances_url(summary_url)
    if url is not None:
        try:
            return parse_maintenances(_fetch(client, url))
        except Exception as exc:  # an older or partial page: the summary may still list them
            log.debug("scheduled maintenances of %s: %s", host_of(url), type(exc).__name__)
    try:
        return parse_maintenances(summary)
    except ValueError:
        return None


def _fetch(client, url: str) -> Any:
    response = client.get(url, timeout=TIMEOUT_S, headers={"Accept": "application/json"})
    response.raise_for_status()
    if len(response.content) > MAX_BYTES:
        raise ValueError("status page too large")
    return response.json()


def poll_status_pages(engine, config, client=None, now: datetime | None = None) -> dict[str, int]:
    """The leader job: every provider with a `status_page`, fetched and stored. A page that fails is
    logged (host only: the URL is config) and tried again next round; its incidents stay as they were."""
    import httpx

    from monitor.maintenance.store import store_provider_windows
    from monitor.storage.queries.official import store_incidents

    pages: Sequence[tuple[str, str]] = [
        (name, p.status_page) for name, p in config.providers.items() if getattr(p, "status_page", None)
    ]
    if not pages:
        return {}
    own = client is None
    client = client or httpx.Client(follow_redirects=True)
    written: dict[str, int] = {}
    try:
        for provider, url in pages:
            try:
                summary = _fetch(client, url)
                incidents = parse_summary(provider, summary)
            except Exception as exc:  # a provider's page being down is no reason to stop the others
                log.warning("status page of %s (%s): %s", provider, host_of(url), type(exc).__name__)
                continue
            written[provider] = store_incidents(engine, provider, incidents, now or datetime.now(UTC))
            planned = _maintenances(client, url, summary)
            if planned is not None:
                with engine.begin() as conn:
                    store_provider_windows(conn, provider, planned, now or datetime.now(UTC))
    finally:
        if own:
            client.close()
    return written
