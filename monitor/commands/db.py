"""`firsttoken db upgrade` (migrate to the newest schema) and `firsttoken db current`."""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator
from datetime import UTC, datetime

from monitor.commands import DEFAULT_CONFIG
from monitor.envvars import DATABASE_URL as ENV_DATABASE_URL
from monitor.errors import UsageError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("db_command", choices=("upgrade", "current"), metavar="{upgrade,current}")


def database_url_for(args: argparse.Namespace) -> str:
    """DESIGN §4: FIRSTTOKEN_DATABASE_URL, else the config's `database`, else SQLite.

    The config is not even read when the environment names the database, and a
    missing default `firsttoken.yaml` means the default database: `db upgrade`
    in a fresh container needs nothing but the URL.
    """
    # SQLAlchemy loads here, not at the top: every command's parser is built on each `firsttoken` call.
    from monitor.storage.db import database_url_from

    if os.environ.get(ENV_DATABASE_URL):
        return database_url_from()
    path = getattr(args, "config", DEFAULT_CONFIG)
    if path == DEFAULT_CONFIG and not os.path.exists(path):
        return database_url_from()
    from monitor.config import load_config

    return database_url_from(load_config(path).database_url)


class SchemaNotReady(Exception):
    """The command's database is not migrated to this version (the message says what to run)."""


def open_migrated(args: argparse.Namespace, *, read_only: bool = False):
    """The command's database (`database_url_for`), checked to be at this version; the caller disposes it.

    `read_only` commands read on the replica that FIRSTTOKEN_READ_DATABASE_URL names, if any."""
    from monitor.storage.db import make_engine
    from monitor.storage.migrate import check_schema
    from monitor.storage.replica import read_database_url

    url = database_url_for(args)
    engine = make_engine(read_database_url(url) if read_only else url)
    problem = check_schema(engine)
    if problem:
        engine.dispose()
        raise SchemaNotReady(problem)
    return engine


def config_section(args: argparse.Namespace, section: str) -> tuple:
    """The config file's `section` (`silences`, `maintenance`) when there is a config file, else ():
    the commands that manage what the database holds work without one."""
    path = getattr(args, "config", None) or "firsttoken.yaml"
    if not os.path.exists(path):
        return ()
    from monitor.config import load_config

    return getattr(load_config(path), section)


@contextlib.contextmanager
def migrated_engine(args: argparse.Namespace, *, read_only: bool = False) -> Iterator:
    """`open_migrated`, disposed on leaving the block."""
    engine = open_migrated(args, read_only=read_only)
    try:
        yield engine
    finally:
        engine.dispose()


def run(args: argparse.Namespace) -> int:
    from monitor.storage import migrate
    from monitor.storage.db import make_engine, redact_url
    from monitor.storage.partitions import ensure_partitions_ahead

    action = getattr(args, "db_command", None)
    if action not in ("upgrade", "current"):
        raise UsageError("firsttoken db: expected 'upgrade' or 'current'")
    url = database_url_for(args)
    engine = make_engine(url)
    try:
        if action == "current":
            problem = migrate.check_schema(engine)
            have = migrate.current_revision(engine) if not problem or "not migrated" in problem else None
            print(f"{redact_url(url)}: revision {have or 'none'} ({problem or 'up to date'})")
            return 0 if problem is None else 1
        before, after = migrate.upgrade(engine, getattr(args, "revision", None) or "head")
        # Today's and the next two days' partitions, so the first samples need no DDL.
        ensure_partitions_ahead(engine, datetime.now(UTC))
        if before == after:
            print(f"{redact_url(url)}: already at revision {after}")
        else:
            print(f"{redact_url(url)}: upgraded from {before or 'none'} to {after}")
        return 0
    finally:
        engine.dispose()
