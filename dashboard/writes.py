"""The dashboard's only writes: an incident published, updated or resolved (DESIGN §16), as
`firsttoken incident publish|update|resolve` does them (monitor.incidents.store).

Everything else the dashboard does is read through dashboard/data.py on a read-only session (a replica
when FIRSTTOKEN_DASHBOARD_DATABASE_URL or FIRSTTOKEN_READ_DATABASE_URL names one). These few writes go
to the primary: FIRSTTOKEN_DATABASE_URL, else the config's `database`; only when neither names a
database, to the one the dashboard reads. Pages call these functions and hold no SQL; each returns
what to tell the reader, or raises WriteFailed with one line.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import streamlit as st
from sqlalchemy import Engine

from dashboard.settings import (
    DEFAULT_CONFIG,
    ENV_CONFIG,
    ENV_DASHBOARD_URL,
    ENV_DATABASE_URL,
    ENV_READ_DATABASE_URL,
    load_settings,
)

T = TypeVar("T")


class WriteFailed(Exception):
    """The write did not happen; `str()` is one line for the reader."""


def write_database_url(env: Mapping[str, str] | None = None) -> str:
    env = os.environ if env is None else env
    names_primary = env.get(ENV_DATABASE_URL) or Path(env.get(ENV_CONFIG) or DEFAULT_CONFIG).is_file()
    if not names_primary:
        return load_settings(env).database_url
    return load_settings(
        {k: v for k, v in env.items() if k not in (ENV_DASHBOARD_URL, ENV_READ_DATABASE_URL)}
    ).database_url


@st.cache_resource(show_spinner=False)
def _engine(url: str) -> Engine:
    from monitor.storage.db import make_engine

    return make_engine(url)


def _author() -> str:
    """Who wrote it: the signed-in user's email under OIDC, else `dashboard`."""
    try:
        email = getattr(st.user, "email", None) if getattr(st.user, "is_logged_in", False) else None
    except Exception:  # no user info outside OIDC
        email = None
    return f"dashboard:{email}" if email else "dashboard"


def _write(fn: Callable[..., T], *args, **kwargs) -> T:
    from monitor.incidents.store import IncidentNotFound
    from monitor.storage.db import db_error_line, redact_url

    url = write_database_url()
    try:
        with _engine(url).begin() as conn:
            return fn(conn, *args, **kwargs)
    except (IncidentNotFound, ValueError) as exc:
        raise WriteFailed(str(exc)) from None
    except Exception as exc:
        raise WriteFailed(f"cannot write to {redact_url(url)}: {db_error_line(exc)}") from exc


def publish_incident(incident_id: int) -> str:
    from monitor.incidents.store import publish

    count = _write(publish, incident_id, datetime.now(UTC))
    return f"Incident {incident_id} published ({count} update{'s' if count != 1 else ''} made public)."


def post_incident_update(incident_id: int, message: str, state: str | None = None) -> str:
    from monitor.incidents.store import post_update

    _write(post_update, incident_id, message, now=datetime.now(UTC), state=state or None, created_by=_author())
    return f"Update posted to incident {incident_id}."


def resolve_incident(incident_id: int, message: str | None = None) -> str:
    from monitor.incidents.store import resolve

    _write(resolve, incident_id, now=datetime.now(UTC), message=message or None, created_by=_author())
    return f"Incident {incident_id} resolved."
