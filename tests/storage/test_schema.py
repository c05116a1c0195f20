import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import inspect, text

from monitor.storage import migrate
from monitor.storage.db import normalize_url, redact_url
from monitor.storage.partitions import ensure_partitions_ahead

EXPECTED_TABLES = {
    "targets",
    "samples",
    "agents",
    "alerts",
    "notification_outbox",
    "silences",
    "rollups_hourly",
    "rollups_daily",
    "rollup_dirty_hours",
    "job_state",
}


def test_check_schema_on_an_unmigrated_database_is_one_actionable_line(empty_engine):
    message = migrate.check_schema(empty_engine)
    head = migrate.head_revision()
    assert message == f"database is not migrated (at revision none, need {head}): run 'firsttoken db upgrade'"
    assert "\n" not in message


def test_migrate_up_from_empty_then_down_and_up_again(empty_engine):
    assert migrate.upgrade(empty_engine) == (None, migrate.head_revision())
    assert migrate.check_schema(empty_engine) is None
    assert set(inspect(empty_engine).get_table_names()) >= EXPECTED_TABLES
    migrate.downgrade(empty_engine, "base")
    assert not EXPECTED_TABLES & set(inspect(empty_engine).get_table_names())
    assert "not migrated" in migrate.check_schema(empty_engine)
    migrate.upgrade(empty_engine)
    assert migrate.check_schema(empty_engine) is None


def test_models_and_migrations_agree_alembic_check(engine):
    if engine.dialect.name == "postgresql":
        ensure_partitions_ahead(engine, datetime.now(UTC))  # run-time partitions are not drift
    migrate.check_models(engine)  # raises alembic.util.CommandError on any difference


def test_unknown_revision_says_upgrade_firsttoken(engine):
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = 'ffff_future'"))
    try:
        assert "does not know" in migrate.check_schema(engine)
    finally:
        with engine.begin() as conn:
            conn.execute(text("UPDATE alembic_version SET version_num = :v"), {"v": migrate.head_revision()})


def test_unreachable_database_is_reported_in_one_line():
    from monitor.storage.db import make_engine

    engine = make_engine("postgresql://nobody:secret@127.0.0.1:1/none")
    message = migrate.check_schema(engine)
    assert message.startswith("cannot open database postgresql+psycopg://nobody:***@127.0.0.1:1/none")
    assert "secret" not in message and "\n" not in message


def test_samples_is_partitioned_by_range_on_postgres(engine):
    if engine.dialect.name != "postgresql":
        return
    with engine.connect() as conn:
        strategy = conn.execute(
            text("SELECT partstrat FROM pg_partitioned_table WHERE partrelid = 'samples'::regclass")
        ).scalar()
        keys = conn.execute(
            text("SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'pk_samples'")
        ).scalar()
    assert strategy == "r"
    assert keys == "PRIMARY KEY (id, started_at)"


def test_urls_are_normalised_to_psycopg3_and_redacted():
    assert normalize_url("postgres://u:p@h/db").drivername == "postgresql+psycopg"
    assert normalize_url("postgresql://u:p@h/db").drivername == "postgresql+psycopg"
    assert normalize_url("sqlite:///x.db").drivername == "sqlite"
    assert "p@" not in redact_url("postgresql://u:p@h/db")


def test_migrations_run_from_any_working_directory(tmp_path):
    db = tmp_path / "elsewhere.db"
    code = (
        "from monitor.storage.db import make_engine; from monitor.storage import migrate; "
        f"e = make_engine('sqlite:///{db}'); print(migrate.upgrade(e)[1])"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == migrate.head_revision()


def test_rollup_hour_index_covers_what_the_health_page_sums(engine):
    """On PostgreSQL an index-only scan over 90 days of every target needs every summed column in
    the index; SQLite has no INCLUDE, so there the same index stays a plain one on `hour`."""
    from monitor.storage.models import HOUR_COVERING_COLUMNS

    if engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            definition = conn.execute(
                text("SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_rollups_hourly_hour'")
            ).scalar_one()
        assert definition.endswith(f"(hour) INCLUDE ({', '.join(HOUR_COVERING_COLUMNS)})"), definition
    else:
        indexes = {i["name"]: i["column_names"] for i in inspect(engine).get_indexes("rollups_hourly")}
        assert indexes["ix_rollups_hourly_hour"] == ["hour"], indexes
