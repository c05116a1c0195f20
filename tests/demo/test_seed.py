"""One seed, one history (issue 32): the demo's backfill writes the same samples and records the same
alerts, relative to the history's end, whatever the time of day it starts and however many workers probe."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from monitor.config import load_config
from monitor.demo.backfill import WorkerPool, history_end_s
from monitor.demo.demo_config import EVALUATE_EVERY
from monitor.demo.incidents import HOUR_S, schedule
from monitor.demo.runner import SIM_PROVIDERS, DemoOptions, fill_history, migrate, write_workdir
from monitor.demo.vantage import far_vantage
from monitor.units import parse_duration

HISTORY_S = 3 * HOUR_S  # as the other demo tests: every incident fires and resolves in it
SEED = 7
NOW_S = 1_780_000_000.0 + 1234.5
ALERT_COLUMNS = (
    *("rule", "scope_kind", "scope_key", "agent", "severity", "state", "started_at", "fired_at", "resolved_at"),
    *("value", "baseline", "fired_value", "worst_value", "summary"),
)


def backfill_at(now_s: float, workdir: Path, pool: WorkerPool | None) -> tuple[list[tuple], list[tuple]]:
    """`firsttoken demo --backfill 3h --seed 7 --backfill-only` started at `now_s`: its samples (every
    column but the id) and alerts, times in seconds from the history's end."""
    options = DemoOptions(
        backfill_s=HISTORY_S, db_path=workdir / "demo.db", workdir=workdir, dashboard=False, live=False, seed=SEED
    )
    epoch_s = history_end_s(now_s, options.history_interval_s, parse_duration(EVALUATE_EVERY))
    config_path = write_workdir(options, "http://127.0.0.1:9")  # the backfill never dials the simulator
    config = load_config(config_path)
    migrate(config.database_url)
    ids = tuple(t.id for t in config.targets if t.provider in SIM_PROVIDERS)
    incidents = schedule(epoch_s, HISTORY_S, now_s)
    far = far_vantage(ids, epoch_s, HISTORY_S, now_s)

    async def fill() -> None:
        await fill_history(options, config, str(config_path), incidents, far, epoch_s, asyncio.Event(), pool)

    asyncio.run(fill())

    def since_end(value):
        if isinstance(value, str) and value[:2] == "20" and value[4:5] == "-":
            return round(datetime.fromisoformat(value).replace(tzinfo=UTC).timestamp() - epoch_s, 6)
        return value

    with sqlite3.connect(options.db_path) as conn:
        columns = [c for _, c, *_ in conn.execute("PRAGMA table_info(samples)") if c != "id"]
        samples = conn.execute(f"SELECT {', '.join(columns)} FROM samples").fetchall()
        alerts = conn.execute(f"SELECT {', '.join(ALERT_COLUMNS)} FROM alerts").fetchall()
    return (
        sorted((tuple(since_end(v) for v in row) for row in samples), key=repr),
        sorted((tuple(since_end(v) for v in row) for row in alerts), key=repr),
    )


@pytest.mark.slow
def test_one_seed_gives_one_history_whenever_and_however_it_is_backfilled(tmp_path):
    samples, alerts = backfill_at(NOW_S, tmp_path / "first", None)
    pool = WorkerPool(2)
    try:  # three days, seven hours and a bit later: another time of day, another phase of the probe grid
        again = backfill_at(NOW_S + 3 * 24 * HOUR_S + 7 * HOUR_S + 101.25, tmp_path / "again", pool)
    finally:
        pool.close()
    fired = [a for a in alerts if a[ALERT_COLUMNS.index("fired_at")] is not None]
    assert len(samples) > 4000 and len(fired) >= 5
    assert again[0] == samples
    assert again[1] == alerts
