"""Sample <-> database row conversion, shared by the writer, queries and spool.

PostgreSQL refuses NUL characters in text and NaN in JSONB, and a NaN latency
would poison every aggregate, so values are made storable here rather than
failing a whole batch: NUL becomes U+FFFD and non-finite floats become NULL.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from monitor.sample import SAMPLE_FIELDS, Sample
from monitor.storage.models import SampleRow

# Table column order; COPY and executemany both rely on it.
SAMPLE_COLUMNS: tuple[str, ...] = tuple(c.name for c in SampleRow.__table__.columns)
if set(SAMPLE_COLUMNS) != set(SAMPLE_FIELDS):  # a new Sample field needs a column and a migration
    raise RuntimeError(f"samples table and Sample disagree: {sorted(set(SAMPLE_COLUMNS) ^ set(SAMPLE_FIELDS))}")

_FLOAT_COLUMNS = frozenset(c.name for c in SampleRow.__table__.columns if c.type.python_type is float)
_TEXT_COLUMNS = frozenset(c.name for c in SampleRow.__table__.columns if c.type.python_type is str)


def clean_text(value: str | None) -> str | None:
    if value is None or "\x00" not in value:
        return value
    return value.replace("\x00", "\ufffd")


def _storable_as_is(mapping: Mapping) -> bool:
    """The common server_timing: text keys, finite numbers. Checked in one pass, not rebuilt."""
    for k, v in mapping.items():
        if type(k) is not str or "\x00" in k:
            return False
        if type(v) is float:
            if not math.isfinite(v):
                return False
        elif type(v) is not int:
            return False
    return True


def clean_json(value: Any) -> Any:
    if isinstance(value, Mapping) and _storable_as_is(value):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, Mapping):
        return {clean_text(str(k)): clean_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_json(v) for v in value]
    return value


_get_all = operator.attrgetter(*SAMPLE_COLUMNS)
_FLOAT_IDX = tuple(i for i, n in enumerate(SAMPLE_COLUMNS) if n in _FLOAT_COLUMNS)
_TEXT_IDX = tuple(i for i, n in enumerate(SAMPLE_COLUMNS) if n in _TEXT_COLUMNS)
_JSON_IDX = SAMPLE_COLUMNS.index("server_timing")
_TIME_IDX = SAMPLE_COLUMNS.index("started_at")


def sample_values(sample: Sample) -> tuple[Any, ...]:
    """One storable tuple in SAMPLE_COLUMNS order (the writer's hot path: keep it lean)."""
    out = list(_get_all(sample))
    for i in _FLOAT_IDX:
        value = out[i]
        if value is not None and not math.isfinite(value):
            out[i] = None
    for i in _TEXT_IDX:
        value = out[i]
        # StrEnum values (ErrorKind) become plain text; drivers may otherwise dump the member name.
        if value is not None and (type(value) is not str or "\x00" in value):
            out[i] = clean_text(str(value))
    if out[_JSON_IDX] is not None:
        out[_JSON_IDX] = clean_json(out[_JSON_IDX])
    started: datetime = out[_TIME_IDX]
    if started.tzinfo is None:
        started = started.replace(tzinfo=UTC)
    out[_TIME_IDX] = started.astimezone(UTC)
    return tuple(out)


def sample_row(sample: Sample) -> dict[str, Any]:
    return dict(zip(SAMPLE_COLUMNS, sample_values(sample), strict=True))


def row_to_sample(row: Mapping[str, Any]) -> Sample:
    values = {name: row[name] for name in SAMPLE_COLUMNS}
    started: datetime = values["started_at"]
    if started.tzinfo is None:
        values["started_at"] = started.replace(tzinfo=UTC)
    return Sample(**values)
