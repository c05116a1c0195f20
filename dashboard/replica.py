"""The sidebar line that says the dashboard reads a replica, and how far behind it is."""

from __future__ import annotations

import streamlit as st

from dashboard import data
from monitor.units import format_duration

# Past this, the numbers on the page are visibly old: say it as a warning, not a caption.
STALE_AFTER_S = 60.0


def replica_note(lag_s: float | None) -> tuple[str, str] | None:
    """(level, text) for a replica `lag_s` behind, None when the dashboard reads the primary (pure)."""
    if lag_s is None:
        return None
    if lag_s < 1:
        return "caption", "Reading a replica, up to date"
    behind = f"Reading a replica {format_duration(round(lag_s))} behind the primary"
    return (
        ("warning", behind + ": the newest samples are not shown yet") if lag_s > STALE_AFTER_S else ("caption", behind)
    )


def show_replica_lag() -> None:
    note = replica_note(data.replica_lag_s())
    if note is not None:
        level, text = note
        (st.sidebar.warning if level == "warning" else st.sidebar.caption)(text)
