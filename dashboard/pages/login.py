"""Sign-in page: a password form, or the OIDC button when `[auth]` is configured."""

from __future__ import annotations

import streamlit as st

from dashboard import auth, ui

ui.header("firsttoken", "Synthetic monitoring of LLM APIs: time to first token, decode speed and errors.")
st.page_link(
    "pages/health.py",
    label="Provider health is public: open it without signing in",
    icon=":material/health_and_safety:",
)
if auth.mode() == "oidc":
    st.button("Sign in", type="primary", on_click=st.login)
else:
    given = st.text_input("Dashboard password", type="password", key="login-password")
    if st.button("Sign in", type="primary", key="login-submit") or given:
        if auth.check_password(given):
            st.rerun()
        st.error("Wrong password.")
