"""Ingest benchmark (DESIGN §7): samples/s into PostgreSQL, every method in one run.

    .venv/bin/python -m benchmarks.ingest [--samples 100000] [--slow-samples 2000] [--rounds 3]
        [--admin-url postgresql+psycopg://postgres@127.0.0.1:5432/postgres]

Creates a throwaway database, migrates it, and times each method on the same
samples (the table is truncated between methods, so every method starts from an
empty table). Every method starts from `Sample` values, so the conversion is
inside every timing. The row-by-row methods are timed on fewer samples (they
would take minutes); their rate is still comparable. Times on shared machines are
noisy: quote the ratios to raw COPY, which are measured side by side.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import psycopg
from psycopg.types.json import Jsonb
from sqlalchemy import Engine, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from monitor.sample import Sample
from monitor.storage import migrate
from monitor.storage.db import make_engine
from monitor.storage.ingest import COPY_TYPES
from monitor.storage.models import SampleRow
from monitor.storage.partitions import day_of, ensure_partitions
from monitor.storage.rows import SAMPLE_COLUMNS, sample_row, sample_values
from monitor.storage.writer import SampleWriter

COLS = ", ".join(SAMPLE_COLUMNS)
BATCH = 500


@dataclass(frozen=True)
class Result:
    method: str
    rows: int
    seconds: float
    note: str = ""

    @property
    def rate(self) -> float:
        return self.rows / self.seconds


TARGETS = 10_000
SPACING_MS = 6  # 10,000 targets at 1-minute intervals, DESIGN §9's sizing


def make_samples(n: int, seed: int = 7) -> list[Sample]:
    rng = random.Random(seed)
    start = datetime.now(UTC) - timedelta(milliseconds=n * SPACING_MS)
    out = []
    for i in range(n):
        t = i % TARGETS
        ok = rng.random() > 0.03
        ttft = rng.lognormvariate(5.5, 0.5)
        out.append(
            Sample(
                target=f"provider{t % 20}/model-{t}@region-{t % 4}:short",
                provider=f"provider{t % 20}",
                model=f"model-{t}",
                region=f"region-{t % 4}",
                prompt="short",
                started_at=start + timedelta(milliseconds=i * SPACING_MS),
                ok=ok,
                error_kind=None if ok else "server_error",
                error_message=None if ok else "HTTP 503: upstream overloaded",
                ttfb_ms=ttft * 0.6,
                ttft_ms=ttft if ok else None,
                ttft_answer_ms=ttft * 1.05 if ok else None,
                total_ms=ttft + rng.lognormvariate(7, 0.3) if ok else None,
                output_tokens=64 if ok else None,
                tokens_source="usage",
                input_tokens=24,
                tps=rng.lognormvariate(4.3, 0.4) if ok else None,
                chunks=63 if ok else 0,
                itl_p50_ms=11.0,
                itl_max_ms=rng.lognormvariate(3.5, 0.5),
                connection_reused=True,
                http_status=200 if ok else 503,
                request_id=f"req_{uuid.UUID(int=rng.getrandbits(128)).hex}",
                model_version="model-2025-01-01",
                server_timing={"queue_ms": round(rng.random() * 5, 3)} if i % 3 == 0 else None,
                sched_lag_ms=rng.random() * 3,
                agent=f"agent-{i % 3}",
            )
        )
    return out


def truncate(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(text("TRUNCATE samples, targets, agents, rollup_dirty_hours"))
    with engine.connect() as conn:  # start each method with settled statistics and no dead tuples
        conn.execution_options(isolation_level="AUTOCOMMIT").execute(text("VACUUM ANALYZE samples"))


def raw_copy(engine: Engine, samples: Sequence[Sample]) -> None:
    with engine.begin() as conn:
        cursor = conn.connection.dbapi_connection.cursor()
        with cursor.copy(f"COPY samples ({COLS}) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(COPY_TYPES)
            for s in samples:
                copy.write_row(sample_values(s))


def writer(engine: Engine, samples: Sequence[Sample], max_batch_size: int | None = None) -> str:
    with tempfile.TemporaryDirectory() as spool_dir:
        w = SampleWriter(engine, spool_dir, max_batch_size=max_batch_size, queue_max=len(samples) + 1)
        t0 = time.perf_counter()
        for s in samples:
            w.submit(s)
        submit_s = time.perf_counter() - t0
        assert w.flush(600), "writer did not finish"
        stats = w.stats()
        w.close()
    assert stats.written_total == len(samples) and stats.spooled_total == 0, stats
    return f"submit() {submit_s / len(samples) * 1e6:.1f} µs/sample on the probe side"


def writer_replay_path(engine: Engine, samples: Sequence[Sample]) -> None:
    from monitor.storage.ingest import BatchInserter

    inserter = BatchInserter(engine)
    now = datetime.now(UTC)
    for i in range(0, len(samples), BATCH):
        inserter.insert(samples[i : i + BATCH], now=now, idempotent=True)


def executemany(engine: Engine, samples: Sequence[Sample]) -> None:
    json_idx = SAMPLE_COLUMNS.index("server_timing")
    placeholders = ", ".join(["%s"] * len(SAMPLE_COLUMNS))
    sql = f"INSERT INTO samples ({COLS}) VALUES ({placeholders}) ON CONFLICT DO NOTHING"
    for i in range(0, len(samples), BATCH):
        rows = []
        for s in samples[i : i + BATCH]:
            row = list(sample_values(s))
            row[json_idx] = None if row[json_idx] is None else Jsonb(row[json_idx])
            rows.append(row)
        with engine.begin() as conn:
            cursor = conn.connection.dbapi_connection.cursor()
            cursor.executemany(sql, rows)


def multirow_insert(engine: Engine, samples: Sequence[Sample]) -> None:
    stmt = pg_insert(SampleRow.__table__).on_conflict_do_nothing()
    for i in range(0, len(samples), BATCH):
        with engine.begin() as conn:
            conn.execute(stmt, [sample_row(s) for s in samples[i : i + BATCH]])


def row_by_row(engine: Engine, samples: Sequence[Sample]) -> None:
    json_idx = SAMPLE_COLUMNS.index("server_timing")
    placeholders = ", ".join(["%s"] * len(SAMPLE_COLUMNS))
    sql = f"INSERT INTO samples ({COLS}) VALUES ({placeholders})"
    raw = engine.raw_connection()
    try:
        conn: psycopg.Connection = raw.dbapi_connection
        for s in samples:
            row = list(sample_values(s))
            row[json_idx] = None if row[json_idx] is None else Jsonb(row[json_idx])
            conn.execute(sql, row)
            conn.commit()
    finally:
        raw.close()


def orm_per_sample(engine: Engine, samples: Sequence[Sample]) -> None:
    for s in samples:
        with Session(engine) as session:
            session.add(SampleRow(**sample_row(s)))
            session.commit()


def count(engine: Engine) -> int:
    with engine.connect() as conn:
        return conn.execute(text("SELECT count(*) FROM samples")).scalar()


def timed(engine: Engine, name: str, fn: Callable, samples: Sequence[Sample]) -> Result:
    truncate(engine)
    t0 = time.perf_counter()
    note = fn(engine, samples) or ""
    seconds = time.perf_counter() - t0
    stored = count(engine)
    assert stored == len(samples), f"{name}: stored {stored} of {len(samples)}"
    print(f"  {name}: {len(samples) / seconds:,.0f} rows/s", file=sys.stderr, flush=True)
    return Result(name, len(samples), seconds, note)


def median_result(runs: list[Result]) -> Result:
    """The run of median rate, noting the spread of all of them."""
    ordered = sorted(runs, key=lambda r: r.rate)
    middle = ordered[len(ordered) // 2]
    spread = f"median of {len(runs)}: {ordered[0].rate:,.0f}-{ordered[-1].rate:,.0f} rows/s" if len(runs) > 1 else ""
    return Result(middle.method, middle.rows, middle.seconds, "; ".join(x for x in (middle.note, spread) if x))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--slow-samples", type=int, default=2_000, help="for row-by-row and ORM")
    parser.add_argument("--rounds", type=int, default=3, help="raw COPY and the writer, interleaved")
    parser.add_argument("--admin-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
    args = parser.parse_args(argv)

    admin = make_engine(args.admin_url, isolation_level="AUTOCOMMIT")
    name = f"firsttoken_bench_{uuid.uuid4().hex[:10]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    engine = make_engine(admin.url.set(database=name))
    try:
        migrate.upgrade(engine)
        samples = make_samples(args.samples)
        slow = samples[: args.slow_samples]
        ensure_partitions(engine, {day_of(s.started_at) for s in samples})
        with engine.connect() as conn:
            server = conn.execute(text("SHOW server_version")).scalar()
        print(
            f"PostgreSQL {server}; {args.samples:,} samples ({args.slow_samples:,} for the slow methods)",
            file=sys.stderr,
        )
        # The two the goal compares run interleaved, `--rounds` times each: on a noisy machine a
        # burst of someone else's work then falls on both alike, and the median of each is quoted.
        pairs = [
            (
                timed(engine, "raw COPY (one statement)", raw_copy, samples),
                timed(engine, "SampleWriter, defaults (<= 20000 per txn)", writer, samples),
            )
            for _ in range(args.rounds)
        ]
        results = [
            median_result([p[0] for p in pairs]),
            median_result([p[1] for p in pairs]),
            timed(engine, f"SampleWriter, {BATCH} per txn", lambda e, s: writer(e, s, BATCH), samples),
            timed(engine, "writer replay path (COPY+ON CONFLICT)", writer_replay_path, samples),
            timed(engine, f"executemany ON CONFLICT (batch {BATCH})", executemany, samples),
            timed(engine, f"multi-row INSERT, SQLAlchemy (batch {BATCH})", multirow_insert, samples),
            timed(engine, "row-by-row INSERT + commit", row_by_row, slow),
            timed(engine, "ORM session per sample", orm_per_sample, slow),
        ]
    finally:
        engine.dispose()
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
    base = results[0].rate
    print(f"\n{'method':46} {'rows':>8} {'rows/s':>10} {'vs raw COPY':>12}")
    for r in results:
        print(f"{r.method:46} {r.rows:>8,} {r.rate:>10,.0f} {r.rate / base:>11.2f}x  {r.note}".rstrip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
