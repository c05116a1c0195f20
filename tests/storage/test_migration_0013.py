"""Migration 0013: `cached_input_tokens` folds into `cache_read_tokens` (DESIGN §13), with the rows
an older firsttoken wrote, on real SQLite and PostgreSQL; and back again."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa

from monitor.storage import migrate
from monitor.storage.partitions import ensure_partitions_ahead

BEFORE, AFTER = "0012_prompt_cache", "0013_one_cache_read_column"
AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
# id -> (cached_input_tokens, cache_read_tokens) as older versions wrote them:
ROWS = {
    "pre-0012": (900, None),  # written before 0012: the older column alone
    "both": (5, 5),  # written by 0012: the same figure twice
    "silent": (None, None),  # the response stated nothing
    "zero": (0, None),  # stated "none cached": a 0 is a figure, not a null
}


def _columns(engine) -> set[str]:
    return {c["name"] for c in sa.inspect(engine).get_columns("samples")}


def _read(engine, *names: str) -> dict[str, tuple]:
    with engine.connect() as conn:
        rows = conn.execute(sa.text(f"SELECT id, {', '.join(names)} FROM samples")).all()
    return {r[0]: tuple(r[1:]) for r in rows}


def test_upgrade_keeps_every_figure_in_one_column_and_downgrade_restores_the_old_one(empty_engine):
    migrate.upgrade(empty_engine, BEFORE)
    ensure_partitions_ahead(empty_engine, AT)  # PostgreSQL: the day's partition; SQLite: nothing
    samples = sa.Table("samples", sa.MetaData(), autoload_with=empty_engine)
    with empty_engine.begin() as conn:
        for id_, (old, new) in ROWS.items():
            conn.execute(
                samples.insert().values(
                    id=id_,
                    started_at=AT,
                    target="openai/m@global:p",
                    provider="openai",
                    model="m",
                    region="global",
                    prompt="p",
                    agent="local",
                    ok=True,
                    chunks=3,
                    cached_input_tokens=old,
                    cache_read_tokens=new,
                )
            )

    assert migrate.upgrade(empty_engine, AFTER) == (BEFORE, AFTER)
    assert "cached_input_tokens" not in _columns(empty_engine)
    assert _read(empty_engine, "cache_read_tokens") == {
        "pre-0012": (900,),
        "both": (5,),
        "silent": (None,),
        "zero": (0,),
    }
    migrate.upgrade(empty_engine)  # the later migrations too, then:
    migrate.check_models(empty_engine)  # the models and the migrated table agree

    migrate.downgrade(empty_engine, BEFORE)
    assert _read(empty_engine, "cached_input_tokens", "cache_read_tokens") == {
        "pre-0012": (900, 900),
        "both": (5, 5),
        "silent": (None, None),
        "zero": (0, 0),
    }
    migrate.upgrade(empty_engine)
    assert _read(empty_engine, "cache_read_tokens")["pre-0012"] == (900,)
