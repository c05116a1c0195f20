"""Dashboard fixtures: seeded SQLite and PostgreSQL databases, and an AppTest factory.

Each backend database is seeded once per module; the app reads it through
FIRSTTOKEN_DASHBOARD_DATABASE_URL, as `firsttoken dashboard` arranges.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from monitor.storage import migrate
from monitor.storage.db import make_engine
from tests.dashboard.seed import Seeded, seed
from tests.pg import PgServer, pg_url

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def _clear_caches() -> None:
    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.fixture(scope="module", params=BACKENDS)
def seeded(request, tmp_path_factory) -> Iterator[tuple[str, Seeded]]:
    """(database URL, what was seeded) for each backend."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('dash') / 'seeded.db'}"
    else:
        server: PgServer = request.getfixturevalue("pg_server")
        url = pg_url(server.create_database())
    engine = make_engine(url)
    migrate.upgrade(engine)
    seeded = seed(engine)
    engine.dispose()
    yield url, seeded


@pytest.fixture
def app(monkeypatch) -> Callable[..., AppTest]:
    """`app(url, password=None)`: a fresh AppTest of dashboard/app.py reading `url`."""

    def build(url: str, password: str | None = None) -> AppTest:
        monkeypatch.setenv("FIRSTTOKEN_DASHBOARD_DATABASE_URL", url)
        monkeypatch.delenv("FIRSTTOKEN_DATABASE_URL", raising=False)
        monkeypatch.setenv("FIRSTTOKEN_CONFIG", "/nonexistent/firsttoken.yaml")
        if password is None:
            monkeypatch.delenv("FIRSTTOKEN_DASHBOARD_PASSWORD", raising=False)
        else:
            monkeypatch.setenv("FIRSTTOKEN_DASHBOARD_PASSWORD", password)
        _clear_caches()
        return AppTest.from_file(APP, default_timeout=120)

    yield build
    _clear_caches()
