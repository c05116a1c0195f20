"""Sign-in page: a password form, or the OIDC button when `[auth]` is configured."""

from __future__ import annotations

import streamlit as st

from dashboard import auth

st.title("firsttoken")
st.caption("Synthetic monitoring of LLM APIs: time to first token, decode speed and errors.")
st.page_link("pages/health.py", label="Provider health is public: open it without signing in", icon="🩺")
if auth.mode() == "oidc":
    st.button("Sign in", type="primary", on_click=st.login)
else:
    with st.form("sign-in"):
        given = st.text_input("Dashboard password", type="password")
        if st.form_submit_button("Sign in", type="primary"):
            if auth.check_password(given):
                st.rerun()
            st.error("Wrong password.")
