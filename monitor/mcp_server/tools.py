"""What the MCP tools answer, read from the database (DESIGN §14). No MCP here: plain
functions of an engine and their arguments, returning the typed models of `models.py`.

`best_routes` is `firsttoken routes --json`: the same query (monitor.storage.queries.routes),
the same ranking and the same objects (monitor.routing.formats), in the same order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine

from monitor.mcp_server import models
from monitor.redact import redact
from monitor.routing.params import RouteParamError, parse_by, parse_floor, parse_window

SEVERITIES = ("page", "ticket", "info")


class ToolInputError(ValueError):
    """An argument the caller can fix; the message names it."""


@dataclass(frozen=True)
class Reader:
    """The read side the tools share: a read-only engine, the status snapshot of
    `/status.json` and the config (None where no config is loaded), the config's secrets to
    redact, a clock."""

    engine: Engine
    status_snapshot: Callable[[], Any] | None = None
    config: Callable[[], Any] | None = None  # the loaded config, for its SLOs; None without one
    secrets: Iterable[str] = ()
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)


def best_routes(
    reader: Reader,
    model: str | None = None,
    prompt: str | None = None,
    agent: str | None = None,
    window: str = "30m",
    min_availability: str = "99%",
    by: str = "ttft",
) -> models.BestRoutes:
    from monitor.routing import formats
    from monitor.storage.queries.routes import load_routes

    try:
        span = parse_window(window)
        floor = parse_floor(min_availability)
        order = parse_by(by)
    except RouteParamError as exc:  # the command line spells it --min-availability; the tool's argument has "_"
        raise ToolInputError(str(exc).replace("min-availability", "min_availability", 1)) from None
    ranked, _ = load_routes(
        reader.engine,
        reader.clock(),
        span,
        model=model or None,
        prompt=prompt or None,
        min_availability=floor,
        by=order,
        agent=agent or None,
    )
    return models.BestRoutes(
        window=window,
        min_availability=floor,
        by=order,
        agent=agent or None,
        routes=[models.Route(**formats.route_object(r)) for r in ranked],
    )


def provider_status(reader: Reader, provider: str) -> models.ProviderStatus:
    """The status JSON's view of one provider (monitor.http.public: the last 15 minutes)."""
    if reader.status_snapshot is None:
        raise ToolInputError("provider_status needs the config (start with --config FILE)")
    snap = reader.status_snapshot()
    status = snap.status
    if provider not in status.providers:
        known = ", ".join(sorted(status.providers)) or "none"
        raise ToolInputError(f"provider: unknown {provider!r} (configured: {known})")
    return models.ProviderStatus(
        provider=provider,
        status=status.providers[provider],
        ttft_p50_ms=_round(status.provider_p50_ms.get(provider)),
        models=[models.ModelStatus(model=m, status=s) for (p, m), s in sorted(status.models.items()) if p == provider],
        incidents=[
            models.Incident(id=i.id, rule=i.rule, model=i.model, title=i.title, started_at=_iso(i.began_at) or "")
            for i in snap.live
            if i.provider == provider
        ],
    )


def recent_alerts(
    reader: Reader, since: str = "24h", severity: str | None = None, state: str | None = None
) -> models.RecentAlerts:
    """Alerts alive at any time since `since` ago (firing, pending, resolved), newest first."""
    from monitor.storage.queries.alertviews import alerts_between

    try:
        span = parse_window(since)
    except RouteParamError:
        raise ToolInputError("since: a duration such as 30m, 6h or 7d") from None
    if severity is not None and severity not in SEVERITIES:
        raise ToolInputError(f"severity: one of {', '.join(SEVERITIES)}")
    now = reader.clock()
    secrets = list(reader.secrets)
    alerts = []
    for a in alerts_between(reader.engine, now - span, now):
        if (severity and a.severity != severity) or (state and a.state != state):
            continue
        alerts.append(
            models.Alert(
                id=a.id,
                rule=a.rule,
                severity=a.severity,
                state=a.state,
                metric=a.metric,
                scope=models.AlertScope(provider=a.provider, model=a.model, region=a.region, prompt=a.prompt),
                value=a.value_text if a.value_text is not None else _round(a.value),
                baseline=a.baseline_text if a.baseline_text is not None else _round(a.baseline),
                started_at=_iso(a.started_at) or "",
                fired_at=_iso(a.fired_at),
                resolved_at=_iso(a.resolved_at),
                summary=redact(a.summary, secrets) if a.summary else "",
                silenced=bool(a.silenced),
            )
        )
    return models.RecentAlerts(since=since, alerts=alerts)


def slo_status(reader: Reader, name: str | None = None) -> models.SloStatus:
    """`firsttoken slo --json`: the same rollup read (monitor.storage.queries.slo_report), the same rows."""
    from monitor.maintenance.store import slo_coverage
    from monitor.storage.queries.slo_report import slo_reports

    if reader.config is None:
        raise ToolInputError("slo_status needs the config (start with --config FILE)")
    config = reader.config()
    slos = [s for s in config.slos if name in (None, "", s.name)]
    if name and not slos:
        known = ", ".join(s.name for s in config.slos) or "none"
        raise ToolInputError(f"name: unknown SLO {name!r} (configured: {known})")
    now = reader.clock()
    maintenance = slo_coverage(reader.engine, config.maintenance, config.targets, slos, now)  # DESIGN §16
    reports = slo_reports(reader.engine, slos, config.targets, now, maintenance)
    return models.SloStatus(scopes=[models.SloScope(**s.to_dict()) for r in reports for s in r.scopes])


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat().replace("+00:00", "Z")


def _round(value: float | None) -> float | None:
    if value is None or value != value or value in (float("inf"), float("-inf")):
        return None  # JSON has no NaN
    return round(float(value), 3)
