"""`firsttoken probe --store`: write a handful of samples synchronously."""

from __future__ import annotations

from collections.abc import Sequence

from monitor.sample import Sample
from monitor.storage.db import SchemaError, make_engine
from monitor.storage.migrate import check_schema
from monitor.storage.queries import insert_samples


def store_samples(database_url: str, samples: Sequence[Sample]) -> int:
    """Store `samples` idempotently; raises SchemaError (one line) on an unmigrated database."""
    engine = make_engine(database_url)
    try:
        problem = check_schema(engine)
        if problem:
            raise SchemaError(problem)
        insert_samples(engine, samples)
        return len(samples)
    finally:
        engine.dispose()
