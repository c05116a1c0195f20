"""Fixtures for the production-deployment tests: real PgBouncer, tinyproxy and PostgreSQL clusters."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.production.servers import PgBouncer


@pytest.fixture(scope="session")
def pgbouncer(pg_server) -> Iterator[PgBouncer]:
    """Debian's PgBouncer 1.18 in transaction mode in front of the suite's PostgreSQL."""
    with PgBouncer() as bouncer:
        yield bouncer
