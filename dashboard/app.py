"""The Streamlit entry point: page config, access control and navigation.

Run with `firsttoken dashboard`, or `streamlit run dashboard/app.py`.
Visitors who are not signed in see only the Provider health page (the link
product managers share) and the sign-in page.
"""

from __future__ import annotations

import sys
from pathlib import Path

# `streamlit run path/to/app.py` puts only this folder on sys.path; the pages import `dashboard.*`.
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

import streamlit as st  # noqa: E402

from dashboard import auth  # noqa: E402
from dashboard.replica import show_replica_lag  # noqa: E402

PAGES = Path(__file__).resolve().parent / "pages"

st.set_page_config(
    page_title="firsttoken", page_icon=":material/timer:", layout="wide", initial_sidebar_state="expanded"
)


def page(name: str, title: str, icon: str, default: bool = False) -> st.Page:
    return st.Page(str(PAGES / f"{name}.py"), title=title, icon=icon, url_path=name, default=default)


health = page("health", "Provider health", ":material/health_and_safety:")
if auth.is_authenticated():
    navigation = st.navigation(
        {
            "Monitor": [
                page("overview", "Overview", ":material/grid_view:", default=True),
                page("trends", "Trends", ":material/show_chart:"),
                page("compare", "Compare", ":material/compare_arrows:"),
                page("timeline", "Degradation timeline", ":material/view_timeline:"),
                page("target", "Target", ":material/my_location:"),
            ],
            "Providers": [
                health,
                page("slos", "SLOs", ":material/speed:"),
                page("reports", "Reports", ":material/summarize:"),
            ],
            "Operations": [
                page("alerts", "Alerts", ":material/notifications_active:"),
                page("samples", "Samples", ":material/table_rows:"),
            ],
        }
    )
    show_replica_lag()
    if auth.mode() != "open" and st.sidebar.button("Sign out"):
        auth.sign_out()
        st.rerun()
else:
    navigation = st.navigation([page("login", "Sign in", ":material/login:", default=True), health])
navigation.run()
