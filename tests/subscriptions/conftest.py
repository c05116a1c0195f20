"""Incident and subscription fixtures: the alert tests' migrated databases (SQLite, then PostgreSQL)."""

from __future__ import annotations

from tests.alerts.conftest import db, pg_alerts_engine  # noqa: F401 (fixtures, by name)
