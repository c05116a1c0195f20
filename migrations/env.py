"""Alembic environment for firsttoken.

Run through `monitor.storage.migrate` (what `firsttoken db upgrade` calls),
which builds the Alembic config in code and hands over an open connection, so
no alembic.ini and no particular working directory are needed. Plain
`alembic -c …` also works: the URL then comes from `sqlalchemy.url` or
FIRSTTOKEN_DATABASE_URL.
"""

from __future__ import annotations

from alembic import context

from monitor.storage.db import database_url_from, make_engine
from monitor.storage.models import Base
from monitor.storage.partitions import is_partition_name

config = context.config
target_metadata = Base.metadata


def include_name(name: str | None, type_: str, parent_names) -> bool:
    # Day partitions of `samples` are made at run time, not by migrations.
    return not (type_ == "table" and name is not None and is_partition_name(name))


def _configure(**kwargs) -> None:
    context.configure(
        target_metadata=target_metadata,
        include_name=include_name,
        compare_type=True,
        **kwargs,
    )


def run_offline() -> None:
    _configure(url=database_url_from(config.get_main_option("sqlalchemy.url")), literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection=connection, render_as_batch=connection.dialect.name == "sqlite")
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = make_engine(database_url_from(config.get_main_option("sqlalchemy.url")))
    try:
        with engine.connect() as conn:
            _configure(connection=conn, render_as_batch=conn.dialect.name == "sqlite")
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
