"""Alerts: what fires now, what fired before, what is silenced, and whether notifications got out."""

from __future__ import annotations

from datetime import timedelta

import streamlit as st

from dashboard import alert_rows, data, incident_panel, ui, urlstate
from monitor.official.match import lead_text, matching_incident

ui.header(
    "Alerts",
    "The alert engine owns these tables. Silences mute notifications, never measurement "
    "(add them with `firsttoken silence add`). An inhibited alert is recorded and delivered nowhere: "
    "another firing alert already says it (`held back` names which). Incidents, drafted from confirmed "
    "pages, are published, updated and resolved here or with `firsttoken incident`.",
)
ui.require_targets()
now = data.now()
days = urlstate.bound(
    st.segmented_control, "History", [1, 7, 30, 90], name="days", key="alerts-days", default=30,
    format_func=lambda d: f"{d} d",
)  # fmt: skip
ad = ui.load(data.alerts_data, now, days or 30)
marked = urlstate.integer("alert")
official = ui.load(data.official_between, now - timedelta(days=(days or 30) + 1), now)


def vs_official(a) -> str:
    """How long before (or after) the provider's own status page our alert fired."""
    fired = a.fired_at or a.started_at
    return lead_text(fired, matching_incident(a.provider, fired, official))


def show(alerts) -> None:
    """Fired at, worst and baseline in the metric's units; `view` opens the alert's own scope and time."""
    alerts = sorted(alerts, key=lambda a: a.id != marked)  # an alert link's alert first (a stable sort)
    table = alert_rows.rows(alerts, now)
    for a, r in zip(alerts, table, strict=True):
        r["vs provider's status page"] = vs_official(a)
    st.dataframe(table, hide_index=True, width="stretch", column_config=alert_rows.link_column())


firing, pending = [a for a in ad.live if a.state == "firing"], [a for a in ad.live if a.state == "pending"]
c = st.columns(5)
c[0].metric("Firing", len(firing))
c[1].metric("Inhibited", sum(a.inhibited_by is not None for a in firing))
c[2].metric("Pending", len(pending))
c[3].metric(f"Resolved ({days or 30} d)", len(ad.past))
c[4].metric("Failed deliveries", sum(d.status == "failed" for d in ad.deliveries))

st.subheader("Firing and pending")
if ad.live:
    show(ad.live)
else:
    st.success("Nothing is firing.", icon=":material/check_circle:")

st.subheader("Resolved")
if ad.past:
    show(ad.past)
else:
    st.caption("No alert resolved in this period.")

incident_panel.show(now)

st.subheader("Silences")
if ad.silences:
    st.dataframe(
        [
            {
                "active": s.active(now),
                "match": ", ".join(f"{k}={v}" for k, v in sorted(s.match.items())),
                "from (UTC)": s.starts_at.strftime("%Y-%m-%d %H:%M"),
                "until (UTC)": s.ends_at.strftime("%Y-%m-%d %H:%M"),
                "reason": s.reason,
                "by": s.created_by,
            }
            for s in ad.silences
        ],
        hide_index=True,
        width="stretch",
    )
else:
    st.caption("No silence active or recently ended.")

st.subheader("Notification deliveries")
if ad.deliveries:
    st.dataframe(
        [
            {
                "status": d.status,
                "event": d.event,
                "notifier": d.notifier,
                "rule": d.rule,
                "scope": d.scope_key,
                "attempts": d.attempts,
                "created (UTC)": d.created_at.strftime("%Y-%m-%d %H:%M:%S"),
                "sent (UTC)": d.sent_at.strftime("%Y-%m-%d %H:%M:%S") if d.sent_at else "",
                "next try (UTC)": d.next_attempt_at.strftime("%H:%M:%S") if d.status == "pending" else "",
                "last error": d.last_error or "",
            }
            for d in ad.deliveries
        ],
        hide_index=True,
        width="stretch",
    )
else:
    st.caption("No notification has been queued yet.")
