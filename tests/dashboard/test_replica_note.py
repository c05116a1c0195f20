"""The sidebar's replica line: nothing on a primary, a caption when close, a warning when stale."""

from __future__ import annotations

import pytest

from dashboard.replica import STALE_AFTER_S, replica_note
from dashboard.settings import load_settings


@pytest.mark.parametrize(
    ("lag_s", "expected"),
    [
        (None, None),
        (0.0, ("caption", "Reading a replica, up to date")),
        (12.4, ("caption", "Reading a replica 12s behind the primary")),
        (
            STALE_AFTER_S + 540,
            ("warning", "Reading a replica 10m behind the primary: the newest samples are not shown yet"),
        ),
    ],
)
def test_replica_note(lag_s, expected):
    assert replica_note(lag_s) == expected


def test_the_dashboard_reads_the_replica_when_one_is_named(tmp_path):
    env = {
        "FIRSTTOKEN_DATABASE_URL": "postgresql://primary/db",
        "FIRSTTOKEN_READ_DATABASE_URL": "postgresql://replica/db",
    }
    assert load_settings(env).database_url == "postgresql://replica/db"
    # An explicit `firsttoken dashboard --database` still wins.
    env["FIRSTTOKEN_DASHBOARD_DATABASE_URL"] = "postgresql://chosen/db"
    assert load_settings(env).database_url == "postgresql://chosen/db"
