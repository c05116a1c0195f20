"""The `prepare_threshold` URL option and the relay check behind its `auto` default (pure parts)."""

from __future__ import annotations

import pytest
from sqlalchemy.engine import make_url

from monitor.storage.db import DatabaseURLError, make_engine
from monitor.storage.pooler import AUTO, prepare_policy, relayed


@pytest.mark.parametrize(
    ("query", "policy"),
    [("", AUTO), ("?prepare_threshold=auto", AUTO), ("?prepare_threshold=none", None), ("?prepare_threshold=off", None),
     ("?prepare_threshold=0", 0), ("?prepare_threshold=12", 12)],
)  # fmt: skip
def test_the_url_option_is_read_and_taken_out_of_the_url(query, policy):
    url, got = prepare_policy(make_url(f"postgresql+psycopg://u@db:6432/x{query}&sslmode=require".replace("x&", "x?")))
    assert got == policy
    assert "prepare_threshold" not in url.query and url.query["sslmode"] == "require"


def test_a_bad_option_is_a_one_line_configuration_error_that_hides_the_password():
    with pytest.raises(DatabaseURLError) as raised:
        make_engine("postgresql://u:hunter2@db/x?prepare_threshold=sometimes")
    (line,) = raised.value.errors
    assert "prepare_threshold" in line and "'sometimes'" in line and "hunter2" not in line


@pytest.mark.parametrize(
    ("server_port", "host", "port", "is_relayed"),
    [
        (5432, "db.internal", 5432, False),  # straight to PostgreSQL
        (5432, "127.0.0.1", 6432, True),  # PgBouncer on its usual port
        (None, "127.0.0.1", 6432, True),  # PgBouncer reaching PostgreSQL over its Unix socket
        (None, "/var/run/postgresql", 5432, False),  # ourselves over the Unix socket: cannot tell, assume direct
        (5432, "/tmp", 6432, True),  # PgBouncer's own Unix socket
    ],
)
def test_a_backend_on_another_port_than_the_one_dialled_is_relayed(server_port, host, port, is_relayed):
    assert relayed(server_port, host, port) is is_relayed
