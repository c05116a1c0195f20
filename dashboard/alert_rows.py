"""Alerts as table rows for people (pure: AlertViews in, dicts of strings out).

One shape for the Alerts page, the Overview's live list and the target page,
so an alert reads the same everywhere: the value it fired at, its worst while
firing, the baseline (or threshold) beside them, how long it fired, and, once
resolved, the value it resolved at, labelled as such. Alerts of any kind
(`change` alerts included) get a row: values that are not numbers read "—".
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from urllib.parse import urlencode

from monitor import fmt
from monitor.storage.queries.alertviews import AlertView

TIME = "%Y-%m-%d %H:%M"


def view_link(a: AlertView) -> str:
    """The dashboard path of an alert's own view (relative: the page's own host and base)."""
    from monitor.alerts.links import alert_url

    scope = {"provider": a.provider, "model": a.model, "region": a.region, "prompt": a.prompt}
    return alert_url("/", alert_id=a.id, scope=scope, started_at=a.started_at, resolved_at=a.resolved_at) or ""


def target_link(target_id: str, **extra: str) -> str:
    return "/target?" + urlencode({"target": target_id, **extra})


def reference(a: AlertView) -> str:
    """What the alert's `baseline` is: a regression's own normal, or a threshold rule's bound (the
    engine's summary names it: monitor.alerts.render)."""
    return "threshold" if a.summary and ", threshold " in a.summary else "baseline"


def row(a: AlertView, now: datetime, *, links: bool = True) -> dict[str, object]:
    resolved = a.state == "resolved"
    out: dict[str, object] = {"view": view_link(a)} if links else {}  # first: wide tables scroll
    out |= {
        "state": a.state,
        "severity": a.severity,
        "rule": a.rule,
        "scope": a.scope_key,
        "metric": a.metric,
        "fired at": fmt.metric(a.metric, a.fired_value),
        "worst": fmt.metric(a.metric, a.worst_value),
        "baseline": fmt.metric(a.metric, a.baseline) + (" (threshold)" if reference(a) == "threshold" else ""),
    }
    out["resolved at" if resolved else "now"] = fmt.metric(a.metric, a.value)
    if a.is_change:  # a change alert's values are labels: the new route or build, and the one it left
        out.update({"fired at": a.value_text or "—", "worst": "—", "baseline": a.baseline_text or "—"})
        out["resolved at" if resolved else "now"] = a.value_text or "—"
    out["started (UTC)"] = a.begins_at.strftime(TIME)
    if resolved and a.resolved_at:
        out["ended (UTC)"] = a.resolved_at.strftime(TIME)
    out["duration"] = fmt.span(a.duration_s(now)) if a.fired_at or resolved else "pending"
    out["silenced"] = a.silenced
    out["held back"] = a.held_back  # inhibited or muted: recorded, delivered nowhere (DESIGN §15)
    out["summary"] = a.summary or ""
    return out


def rows(alerts: Sequence[AlertView], now: datetime, *, links: bool = True) -> list[dict[str, object]]:
    return [row(a, now, links=links) for a in alerts]


def link_column():
    """The `view` column as a link (Streamlit's column config; imported lazily to keep this pure)."""
    import streamlit as st

    return {"view": st.column_config.LinkColumn("view", display_text="open", help="This alert's own view")}


def seen_from(a: AlertView) -> str:
    """Where the condition held and where not (DESIGN §11); '' before vantage points."""
    if not a.agents:
        return ""
    clear = f"; normal from {', '.join(a.agents_clear)}" if a.agents_clear else ""
    return f"seen from {', '.join(a.agents)}{clear}"


def attribution_text(a: AlertView) -> str:
    """`Mostly the network path: +943 ms network, +6 ms provider (seen from eu-west; normal from us-east)`."""
    split = a.attribution or {}
    if not split:
        return ""
    who = "the network path" if split.get("dominant") == "network" else "the provider"
    where = f" ({seen_from(a)})" if a.agents else ""
    return (
        f"**Is it them or us:** mostly {who} — {float(split['network_ms']):+,.0f} ms network, "
        f"{float(split['provider_ms']):+,.0f} ms provider{where}."
    )


def attribution_rows(alerts: Sequence[AlertView]) -> list[dict[str, object]]:
    return [
        {
            "alert": f"#{a.id} {a.rule}",
            "started (UTC)": a.begins_at.strftime(TIME),
            "scope": f"from {a.agent}" if a.agent else a.scope_kind,
            "network": f"{float(a.attribution['network_ms']):+,.0f} ms",
            "provider": f"{float(a.attribution['provider_ms']):+,.0f} ms",
            "mostly": a.attribution["dominant"],
            "where": seen_from(a),
        }
        for a in alerts
        if a.attribution
    ]
