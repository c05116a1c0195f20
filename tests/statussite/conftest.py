"""The alert tests' `db` fixture (a migrated SQLite database, then PostgreSQL) for the status site's tests."""

from tests.alerts.conftest import db, pg_alerts_engine  # noqa: F401
