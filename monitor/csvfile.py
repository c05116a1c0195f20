"""A CSV file's rows, or one line saying why not: what every CSV reader of the command line shares
(`backtest --csv`, `backtest --slo`, `backtest --samples`, `samples import`)."""

from __future__ import annotations

import csv


def read_rows(path: str, error: type[Exception]) -> list[list[str]]:
    """All rows of `path` (a UTF-8 BOM is dropped); `error` with the path and the reason otherwise."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            return list(csv.reader(f))
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except csv.Error as exc:
        raise error(f"{path}: not CSV: {exc}") from None
