"""`firsttoken samples import FILE`: load the CSV `firsttoken samples --csv` writes (DESIGN §17), so a
history moves between databases and a report or a backtest can be reproduced elsewhere.

Every row is read and checked before anything is written: a bad row is one line naming the file, the
line and the column, exit 2, and nothing is loaded. The rows then go in as one transaction, through the
same writer the agents use (PostgreSQL day partitions created as needed); a sample already stored
(the same `id`) is skipped, so importing a file twice loads it once.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from sqlalchemy import func, select

from monitor.errors import UsageError


def run_import(args: argparse.Namespace) -> int:
    from monitor.commands.db import SchemaNotReady, migrated_engine
    from monitor.storage.ingest import BatchInserter
    from monitor.storage.models import SampleRow
    from monitor.storage.samples_csv import SamplesCsvError, read_samples_file

    path = getattr(args, "file", None)
    if not path:
        raise UsageError("firsttoken samples import: name the CSV file to load")
    try:
        samples = read_samples_file(path)
    except SamplesCsvError as exc:
        raise UsageError(f"firsttoken samples import: {exc}") from None
    count = select(func.count()).select_from(SampleRow.__table__)
    try:
        with migrated_engine(args) as engine:
            with engine.connect() as conn:
                before = conn.execute(count).scalar_one()
            inserter = BatchInserter(engine)
            try:
                inserter.insert(samples, now=datetime.now(UTC))  # one batch: one transaction
            finally:
                inserter.close()
            with engine.connect() as conn:
                added = conn.execute(count).scalar_one() - before
    except SchemaNotReady as exc:
        print(f"firsttoken: {exc}", file=sys.stderr)
        return 1
    print(f"imported {added} samples from {path} ({len(samples) - added} already stored)")
    return 0
