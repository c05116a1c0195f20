"""The reports tests' `db` fixture: a migrated SQLite database, then PostgreSQL (the alert tests')."""

from tests.alerts.conftest import db, pg_alerts_engine  # noqa: F401
