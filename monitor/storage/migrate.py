"""Alembic, driven from code: `firsttoken db upgrade` and the start-up schema check.

The Alembic config is built here rather than read from an alembic.ini, so it
works from any working directory and from an installed package. The scripts
live in the top-level `migrations/` directory, which sits next to the
`monitor` package both in a checkout and in site-packages (pyproject ships it).
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import CommandLine, Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, text

import monitor
from monitor.storage.db import db_error_line, is_postgres, redact_url

# Serialises concurrent `db upgrade` runs (two containers starting at once).
_MIGRATION_LOCK_KEY = 0x66745F6D6967  # "ft_mig"


def migrations_dir() -> Path:
    path = Path(monitor.__file__).resolve().parent.parent / "migrations"
    if not (path / "env.py").is_file():
        raise FileNotFoundError(f"firsttoken migrations not found at {path}; the installation is incomplete")
    return path


def alembic_config(engine: Engine | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    cfg.set_main_option("path_separator", "os")
    if engine is not None:
        # Escaped: Config values go through ConfigParser interpolation.
        cfg.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False).replace("%", "%%"))
    return cfg


def head_revision() -> str:
    heads = ScriptDirectory.from_config(alembic_config()).get_heads()
    return heads[0] if len(heads) == 1 else "+".join(sorted(heads))


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        heads = MigrationContext.configure(conn).get_current_heads()
    if not heads:
        return None
    return heads[0] if len(heads) == 1 else "+".join(sorted(heads))


def _run(engine: Engine, fn, *args) -> None:
    cfg = alembic_config(engine)
    with engine.begin() as conn:
        if is_postgres(engine):
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _MIGRATION_LOCK_KEY})
        cfg.attributes["connection"] = conn
        fn(cfg, *args)


def upgrade(engine: Engine, revision: str = "head") -> tuple[str | None, str | None]:
    """Migrate to `revision`; returns (from, to)."""
    before = current_revision(engine)
    _run(engine, command.upgrade, revision)
    return before, current_revision(engine)


def downgrade(engine: Engine, revision: str = "base") -> None:
    _run(engine, command.downgrade, revision)


def check_models(engine: Engine) -> None:
    """`alembic check`: raises if the models and the migrated database disagree."""
    _run(engine, command.check)


def check_schema(engine: Engine) -> str | None:
    """None when the database is at head, else the one line `firsttoken run` prints."""
    need = head_revision()
    database = engine.url.database
    if engine.dialect.name == "sqlite" and database and database != ":memory:" and not Path(database).exists():
        have = None  # not even created: say so without leaving an empty file behind
    else:
        try:
            have = current_revision(engine)
        except Exception as exc:
            return f"cannot open database {redact_url(engine.url)}: {db_error_line(exc)}"
    if have == need:
        return None
    known = {s.revision for s in ScriptDirectory.from_config(alembic_config()).walk_revisions()}
    if have is not None and have not in known:
        return f"database is at revision {have}, which this firsttoken does not know: upgrade firsttoken"
    return f"database is not migrated (at revision {have or 'none'}, need {need}): run 'firsttoken db upgrade'"


def main(argv: list[str] | None = None) -> None:
    """The full Alembic command line on firsttoken's scripts, for developers:

    FIRSTTOKEN_DATABASE_URL=… python -m monitor.storage.migrate revision --autogenerate -m "add x"
    FIRSTTOKEN_DATABASE_URL=… python -m monitor.storage.migrate check
    """
    cli = CommandLine(prog="python -m monitor.storage.migrate")
    options = cli.parser.parse_args(argv)
    if not hasattr(options, "cmd"):
        cli.parser.error("too few arguments")
    cfg = alembic_config()
    cfg.cmd_opts = options
    cli.run_cmd(cfg, options)


if __name__ == "__main__":
    main()
