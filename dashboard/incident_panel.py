"""The Alerts page's Incidents section (DESIGN §16): what `firsttoken incident` does, in the dashboard.

The incidents the alert rounds drafted, newest first; for the one picked, its timeline and three
actions: publish (the incident and every draft update), post an update (a message, and a new state if
it changed), resolve. Reads through dashboard/data.py, writes through dashboard/writes.py.
"""

from __future__ import annotations

from datetime import datetime

import streamlit as st

from dashboard import data, ui, writes

STATES = ("investigating", "identified", "monitoring", "resolved")
KEEP_STATE = "(keep the state)"
SAID = "incident-said"  # what the last action did, shown once


def _when(at: datetime | None) -> str:
    return at.strftime("%Y-%m-%d %H:%M") if at else ""


def rows(incidents) -> list[dict]:
    return [
        {
            "id": i.id,
            "status": i.status,
            "state": i.state,
            "provider": i.provider,
            "title": i.title,
            "components": ", ".join(i.components),
            "started (UTC)": _when(i.started_at),
            "resolved (UTC)": _when(i.resolved_at),
            "drafts": i.drafts,
        }
        for i in incidents
    ]


def _act(fn, *args) -> None:
    """A button's callback: runs before the page is drawn again, so the page shows what it did."""
    try:
        said = ("success", fn(*args))
    except writes.WriteFailed as exc:
        said = ("error", str(exc))
    data.incidents.clear()
    st.session_state[SAID] = said


def _post(incident_id: int) -> None:
    message = st.session_state.get("incident-message") or ""
    state = st.session_state.get("incident-state")
    if not message.strip():
        st.session_state[SAID] = ("error", "Write what the public should read.")
        return
    _act(writes.post_incident_update, incident_id, message, None if state == KEEP_STATE else state)


def show(now: datetime) -> None:
    st.subheader("Incidents")
    kind, said = st.session_state.pop(SAID, (None, None))
    if kind == "success":
        st.success(said, icon=":material/check_circle:")
    elif kind == "error":
        st.error(said, icon=":material/error:")
    incidents = ui.load(data.incidents, now)
    if not incidents:
        st.caption(
            "No incident yet. Confirmed pages draft them (DESIGN §16); with `status_site.publish: manual` they "
            "wait here to be published."
        )
        return
    st.dataframe(rows(incidents), hide_index=True, width="stretch")
    by_id = {i.id: i for i in incidents}
    picked = st.selectbox(
        "Incident", list(by_id), key="incident-pick", format_func=lambda i: f"#{i} · {by_id[i].title}"
    )
    incident = by_id[picked]
    st.dataframe(
        [
            {"at (UTC)": _when(u.at), "kind": u.kind, "state": u.state, "published": u.published,
             "message": u.message, "by": u.created_by or "firsttoken"}
            for u in incident.updates
        ],
        hide_index=True,
        width="stretch",
    )  # fmt: skip
    left, right = st.columns(2)
    if incident.status == "draft" or incident.drafts:
        what = "Publish" if incident.status == "draft" else f"Publish {incident.drafts} draft update(s)"
        left.button(what, key="incident-publish", type="primary", on_click=_act,
                    args=(writes.publish_incident, incident.id))  # fmt: skip
    if incident.state != "resolved":
        right.button("Resolve", key="incident-resolve", on_click=_act, args=(writes.resolve_incident, incident.id))
    with st.form("incident-update", clear_on_submit=True):
        st.text_area("Update", key="incident-message", placeholder="What the public reads", max_chars=5000)
        st.selectbox("State", [KEEP_STATE, *STATES], key="incident-state")
        public = "published at once" if incident.status == "published" else "waits for Publish with the rest"
        st.form_submit_button(f"Post update ({public})", on_click=_post, args=(incident.id,))
