"""Storage: schema, migrations, the sample writer and spool, rollups, retention, queries.

ORM classes stay inside this package; everything exported here takes and
returns plain values (`Sample`, frozen dataclasses, datetimes). Exports are
imported lazily so `monitor.storage.histogram` stays cheap to import.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "DEFAULT_DATABASE_URL": "monitor.storage.db",
    "SchemaError": "monitor.storage.db",
    "database_url_from": "monitor.storage.db",
    "make_engine": "monitor.storage.db",
    "redact_url": "monitor.storage.db",
    "check_schema": "monitor.storage.migrate",
    "head_revision": "monitor.storage.migrate",
    "upgrade": "monitor.storage.migrate",
    "SampleWriter": "monitor.storage.writer",
    "WriterStats": "monitor.storage.writer",
    "apply_retention": "monitor.storage.retention",
    "rollup_recent": "monitor.storage.rollups",
    "rollup_dirty": "monitor.storage.rollups",
    "rollup_hours": "monitor.storage.rollups",
    "ensure_partitions_ahead": "monitor.storage.partitions",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'monitor.storage' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
