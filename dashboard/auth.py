"""Who may see the SRE pages: a shared password, or OIDC through `st.login`.

- `[auth]` in `.streamlit/secrets.toml`: OIDC (`st.login`); the identity
  provider decides who gets in.
- else FIRSTTOKEN_DASHBOARD_PASSWORD: one shared password, compared in constant time.
- else: open (a dashboard on loopback, or behind the team's own proxy).

The Provider health page is never gated: its link is meant to be shared.
"""

from __future__ import annotations

import hmac

import streamlit as st

from dashboard.settings import password

_SESSION_KEY = "firsttoken_authenticated"


def oidc_configured() -> bool:
    try:
        return "auth" in st.secrets
    except Exception:  # no secrets.toml at all: Streamlit raises on first access
        return False


def mode() -> str:
    if oidc_configured():
        return "oidc"
    return "password" if password() else "open"


def is_authenticated() -> bool:
    current = mode()
    if current == "open":
        return True
    if current == "oidc":
        return bool(getattr(st.user, "is_logged_in", False))
    return st.session_state.get(_SESSION_KEY) is True


def check_password(given: str) -> bool:
    expected = password()
    ok = expected is not None and hmac.compare_digest(given.encode(), expected.encode())
    if ok:
        st.session_state[_SESSION_KEY] = True
    return ok


def sign_out() -> None:
    if mode() == "oidc":
        st.logout()
    st.session_state.pop(_SESSION_KEY, None)
