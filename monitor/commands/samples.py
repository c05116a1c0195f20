"""`firsttoken samples`: print stored samples as a table, JSON lines or CSV.

JSON and CSV carry the fields of `probe --json` plus `agent` and `id`
(`Sample.to_dict()`), oldest first. JSON adds `in_maintenance`: whether one of our maintenance
windows (DESIGN §16: the config's, or `firsttoken maintenance add`'s) covers the probe, computed
as it is read (monitor.maintenance says why).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TextIO

from monitor.errors import UsageError
from monitor.sample import Sample, outcome_label, write_csv, write_json
from monitor.units import DURATION_HINT, parse_duration

TABLE_COLUMNS = (
    ("started_at", 26),
    ("agent", 10),
    ("target", 44),
    ("result", 14),
    ("ttft_ms", 8),
    ("answer_ms", 9),
    ("total_ms", 9),
    ("tokens", 7),
    ("tps", 7),
    ("http", 4),
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", nargs="?", choices=["import"], help="import FILE: load a CSV `samples --csv` wrote")
    p.add_argument("file", nargs="?", metavar="FILE", help="with import: the CSV to load")
    p.add_argument("--target", default="*", help="glob over target ids")
    p.add_argument("--since", default="1h", help="how far back, e.g. 15m, 1h, 7d (default 1h)")
    p.add_argument("--limit", type=int, help="at most this many samples (the newest)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="one JSON object per sample per line")
    fmt.add_argument("--csv", action="store_true", help="CSV with a header row")


def run(args: argparse.Namespace) -> int:
    from monitor.commands.db import SchemaNotReady, migrated_engine
    from monitor.storage.queries import recent_samples

    if getattr(args, "action", None) == "import":
        from monitor.commands.samples_import import run_import

        return run_import(args)
    if getattr(args, "file", None):
        raise UsageError(f"firsttoken samples: unexpected {args.file!r} (did you mean `samples import FILE`?)")

    if getattr(args, "json", False) and getattr(args, "csv", False):
        raise UsageError("firsttoken samples: choose one of --json and --csv")
    try:
        since_s = parse_duration(getattr(args, "since", None) or "1h")
    except ValueError:
        raise UsageError(f"firsttoken samples: --since: {DURATION_HINT}") from None
    limit = getattr(args, "limit", None)
    if limit is not None and limit < 1:
        raise UsageError("firsttoken samples: --limit must be at least 1")
    try:
        with migrated_engine(args, read_only=True) as engine:
            now = datetime.now(UTC)
            samples = recent_samples(
                engine,
                target_glob=getattr(args, "target", None) or "*",
                since=now - timedelta(seconds=since_s),
                limit=limit,
            )
            if getattr(args, "json", False):
                covered = _maintenance(engine, args, samples, now)
    except SchemaNotReady as exc:
        print(f"firsttoken: {exc}", file=sys.stderr)
        return 1
    if getattr(args, "json", False):
        write_json(samples, sys.stdout, extra=lambda s: {"in_maintenance": covered.covers(s.target, s.started_at)})
    elif getattr(args, "csv", False):
        write_csv(samples, sys.stdout)
    else:
        write_table(samples, sys.stdout)
    return 0


def _maintenance(engine, args: argparse.Namespace, samples: Sequence[Sample], now: datetime):
    """Which of the samples' targets our maintenance windows cover, over the samples' span."""
    from monitor.commands.db import config_section
    from monitor.maintenance.store import coverage_between

    if not samples:
        from monitor.maintenance.windows import Coverage

        return Coverage({})
    config_windows = config_section(args, "maintenance")
    first = min(s.started_at for s in samples)
    with engine.connect() as conn:
        targets = {s.target: s for s in samples}.values()  # a Sample has its target's labels
        return coverage_between(conn, config_windows, targets, first, now, key="target")


def write_table(samples: Sequence[Sample], out: TextIO) -> None:
    out.write("  ".join(name.ljust(width) for name, width in TABLE_COLUMNS).rstrip() + "\n")
    for s in samples:
        tokens = "" if s.output_tokens is None else f"{s.output_tokens}{'~' if s.tokens_source == 'estimate' else ''}"
        cells = (
            s.started_at.astimezone(UTC).isoformat(timespec="milliseconds"),
            s.agent,
            s.target,
            outcome_label(s),
            _num(s.ttft_ms),
            _num(s.ttft_answer_ms),
            _num(s.total_ms),
            tokens,
            _num(s.tps),
            "" if s.http_status is None else str(s.http_status),
        )
        out.write("  ".join(str(c).ljust(w) for c, (_, w) in zip(cells, TABLE_COLUMNS, strict=True)).rstrip() + "\n")
    if not samples:
        out.write("(no samples in that window)\n")


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"
