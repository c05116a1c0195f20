"""Read the CSV `firsttoken samples --csv` writes back into samples (DESIGN §15, §17).

Every column of `Sample` is parsed by its field's type: the file is the whole sample, so a history
can move between databases and `firsttoken backtest --samples` can replay exactly what the engine
read. A bad row is a `SamplesCsvError` naming the file, the line and the column; nothing is
returned from a file with a bad row, so no caller loads half a file.
"""

from __future__ import annotations

import json
import math
import typing
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from monitor.csvfile import read_rows
from monitor.sample import LEGACY_CACHE_READ, SAMPLE_FIELDS, Sample

REQUIRED = ("target", "provider", "model", "region", "prompt", "started_at", "ok")
_TRUE, _FALSE = ("true", "1", "yes"), ("false", "0", "no")


class SamplesCsvError(ValueError):
    """One line: where in the file, and what is wrong there."""


def _text(cell: str) -> str:
    return cell


def _number(cell: str) -> float:
    value = float(cell)
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


def _integer(cell: str) -> int:
    return int(float(cell)) if "." in cell or "e" in cell.lower() else int(cell)


def _boolean(cell: str) -> bool:
    low = cell.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ValueError("expected true or false")


def _moment(cell: str) -> datetime:
    moment = datetime.fromisoformat(cell.replace("Z", "+00:00") if cell.endswith(("Z", "z")) else cell)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _mapping(cell: str) -> dict:
    value = json.loads(cell)
    if not isinstance(value, dict):
        raise ValueError("expected a JSON object")
    return value


def _parsers() -> dict[str, tuple[Callable[[str], Any], bool]]:
    """field -> (parser, may be empty), from Sample's own annotations."""
    hints = typing.get_type_hints(Sample)
    by_type: dict[Any, Callable[[str], Any]] = {str: _text, float: _number, int: _integer, bool: _boolean}
    by_type[datetime] = _moment
    out = {}
    for name in SAMPLE_FIELDS:
        hint = hints[name]
        args = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
        base = typing.get_origin(args[0]) or args[0]
        out[name] = (_mapping if base is dict else by_type.get(base, _text), type(None) in typing.get_args(hint))
    return out


PARSERS = _parsers()


def read_samples(rows: Iterable[Sequence[str]], source: str = "csv") -> list[Sample]:
    """Every sample of the file, in file order; SamplesCsvError at the first bad row."""
    it = iter(rows)
    header = next(it, None)
    if header is None:
        raise SamplesCsvError(f"{source}: empty file (expected the header `firsttoken samples --csv` writes)")
    names = [h.strip() for h in header]
    missing = [c for c in REQUIRED if c not in names]
    if missing:
        raise SamplesCsvError(f"{source}:1: no {', '.join(missing)} column in the header")
    columns = [(i, n) for i, n in enumerate(names) if n in PARSERS]
    legacy = names.index(LEGACY_CACHE_READ) if LEGACY_CACHE_READ in names else None
    out: list[Sample] = []
    for line, row in enumerate(it, start=2):
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != len(names):
            raise SamplesCsvError(f"{source}:{line}: {len(row)} columns, the header has {len(names)}")
        values: dict[str, Any] = {}
        for i, name in columns:
            parse, optional = PARSERS[name]
            cell = row[i]
            if cell == "":
                if not optional and name in REQUIRED:
                    raise SamplesCsvError(f"{source}:{line}: {name} is empty")
                continue  # the field's default (None, 0, a fresh id)
            try:
                values[name] = parse(cell)
            except (ValueError, TypeError) as exc:
                raise SamplesCsvError(f"{source}:{line}: bad {name} {cell[:40]!r} ({exc})") from None
        if values.get("cache_read_tokens") is None and legacy is not None and row[legacy]:
            values["cache_read_tokens"] = _integer(row[legacy])
        out.append(Sample(**values))
    return out


def read_samples_file(path: str) -> list[Sample]:
    return read_samples(read_rows(path, SamplesCsvError), path)


__all__ = ["SamplesCsvError", "read_samples", "read_samples_file"]
