"""Dashboard benchmark (DESIGN §7): each page's query time on months of samples, beside
the naive percentile query over raw samples, in the same run.

    .venv/bin/python -m benchmarks.dashboard [--targets 200] [--days 30] [--runs 5]
        [--admin-url postgresql+psycopg://postgres@127.0.0.1:5432/postgres] [--keep | --reuse DBNAME]
        [--only SUBSTRING[,SUBSTRING…]]

Seeds a throwaway PostgreSQL database (`benchmarks/dashboard_seed.py`: numpy +
binary COPY per day partition, rollups built by the service's own
`rollup_hours`), then times what each page reads in its default view
(`dashboard.data.page_loads`: the cached loaders the pages call, cache cleared
before every run, so every figure is a cold read) and the naive query: the same
answer computed by `percentile_cont` over raw samples. Prints a markdown table.
The long routes windows are also timed the way they were read before the daily
rollup tier (migration 0008: hourly rollups only), beside the current read.
At full size (200 targets x 30 days x 1/min = 8.6 M samples) seeding takes
76 s on 2 quiet cores (8.5 minutes under load); `--keep` leaves the database for `--reuse`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
from sqlalchemy import Engine, text

from benchmarks import dashboard_seed
from monitor.storage import migrate
from monitor.storage.db import make_engine

ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
PCT = "percentile_cont(ARRAY[0.01, 0.1, 0.5, 0.9, 0.99]) WITHIN GROUP (ORDER BY {col})"
FAILED = "count(*) FILTER (WHERE NOT ok AND coalesce(error_kind, '') <> 'cancelled')"


def naive_queries(at: datetime, ids_twenty: list[str], first: str) -> dict[str, tuple[str, dict]]:
    """The same answers straight from raw samples, as one would write them without rollups."""
    bands = (
        f"SELECT model, floor(extract(epoch FROM started_at) / :step), {PCT.format(col='ttft_ms')} FILTER (WHERE ok), "
        f"{PCT.format(col='tps')} FILTER (WHERE ok), {FAILED} FROM samples "
        "WHERE target = ANY(:ids) AND started_at >= :start AND started_at < :end GROUP BY 1, 2"
    )
    day, hour = timedelta(days=1), timedelta(hours=1)
    return {
        "Overview": (
            "WITH now_ AS (SELECT target, percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY ttft_ms) "
            f"FILTER (WHERE ok), percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) FILTER (WHERE ok), {FAILED} "
            "FROM samples WHERE started_at >= :start GROUP BY target), "
            "base AS (SELECT target, percentile_cont(0.5) WITHIN GROUP (ORDER BY ttft_ms) FILTER (WHERE ok) "
            "FROM samples WHERE started_at >= :base AND started_at < :start GROUP BY target) "
            "SELECT * FROM now_ FULL JOIN base USING (target)",
            {"start": at - hour, "base": at - hour - day},
        ),
        "Trends: 20 targets, last hour": (bands, {"ids": ids_twenty, "start": at - hour, "end": at, "step": 120}),
        "Trends: 20 targets, 24 h": (bands, {"ids": ids_twenty, "start": at - day, "end": at, "step": 3600}),
        "Trends: 20 targets, 30 d": (bands, {"ids": ids_twenty, "start": at - 30 * day, "end": at, "step": 21600}),
        "Trends: 1 target, 30 d": (bands, {"ids": [first], "start": at - 30 * day, "end": at, "step": 21600}),
        "Compare: all models, 24 h": (
            f"SELECT provider, model, prompt, percentile_cont(ARRAY[0.1, 0.5, 0.9]) WITHIN GROUP (ORDER BY ttft_ms) "
            f"FILTER (WHERE ok), percentile_cont(ARRAY[0.1, 0.5, 0.9]) WITHIN GROUP (ORDER BY tps) FILTER (WHERE ok), "
            f"{FAILED}, avg(input_tokens), avg(output_tokens) FROM samples WHERE started_at >= :start GROUP BY 1, 2, 3",
            {"start": at - day},
        ),
        "Routes: all models, 30 min (Compare)": (
            "SELECT target, percentile_cont(ARRAY[0.5, 0.75, 0.9, 0.99]) WITHIN GROUP (ORDER BY ttft_ms) "
            f"FILTER (WHERE ok), percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) FILTER (WHERE ok), {FAILED}, "
            "count(*), sum(cost_usd), count(*) FILTER (WHERE fallback) FROM samples WHERE started_at >= :start "
            "GROUP BY target",
            {"start": at - timedelta(minutes=30)},
        ),
        **{
            f"Routes: all models, {days} d": (
                "SELECT target, percentile_cont(ARRAY[0.5, 0.75, 0.9, 0.99]) WITHIN GROUP (ORDER BY ttft_ms) "
                f"FILTER (WHERE ok), percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) FILTER (WHERE ok), {FAILED}, "
                "count(*), sum(cost_usd) FROM samples WHERE started_at >= :start GROUP BY target",
                {"start": at - days * day},
            )
            for days in (7, 30)
        },
        "Timeline: all targets, 24 h (default)": (
            "SELECT target, date_trunc('hour', started_at), count(*), "
            f"{FAILED}, percentile_cont(0.5) WITHIN GROUP (ORDER BY ttft_ms) FILTER (WHERE ok) "
            "FROM samples WHERE started_at >= :start GROUP BY 1, 2",
            {"start": at - day},
        ),
        "Timeline: all targets, 7 d": (
            "SELECT target, date_trunc('hour', started_at), count(*), "
            f"{FAILED}, percentile_cont(0.5) WITHIN GROUP (ORDER BY ttft_ms) FILTER (WHERE ok) "
            "FROM samples WHERE started_at >= :start GROUP BY 1, 2",
            {"start": at - 7 * day},
        ),
        "Provider health: 90 days": (
            "SELECT target, date_trunc('day', started_at), count(*), "
            f"{FAILED}, percentile_cont(0.5) WITHIN GROUP (ORDER BY ttft_ms) FILTER (WHERE ok) "
            "FROM samples WHERE started_at >= :start GROUP BY 1, 2",
            {"start": at - 90 * day},
        ),
    }


# The SLOs timed (DESIGN §12): one budget per target with a latency bound, one per provider.
SLOS = [
    {"name": "chat-interactive", "objective": "99.5%", "good": {"ttft_ms": {"below": "1500ms"}}, "per": "target"},
    {"name": "answers", "objective": "99%", "per": "provider"},
]


def slo_config(path: Path) -> Path:
    """A config whose targets are the seeded ones (every provider, model, region and prompt), with SLOS."""
    import json

    providers = {
        p: {
            "protocol": "openai-chat",
            "regions": {r: "http://127.0.0.1:9/v1" for r in dashboard_seed.REGIONS},
            "models": list(models),
        }
        for p, models in dashboard_seed.PROVIDERS.items()
    }
    prompts = {
        name: {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 8} for name in dashboard_seed.PROMPTS
    }
    config = {
        "providers": providers,
        "prompts": prompts,
        "checks": [{"providers": list(providers), "prompts": list(prompts)}],
        "slos": SLOS,
    }
    path.write_text(json.dumps(config))
    return path


def slo_naive(at: datetime) -> tuple[str, dict]:
    """`firsttoken slo` straight from raw samples: good and all probes per target over 30 days."""
    return (
        "SELECT target, count(*) FILTER (WHERE coalesce(error_kind, '') <> 'cancelled'), "
        "count(*) FILTER (WHERE ok AND ttft_ms < 1500), count(*) FILTER (WHERE ok) "
        "FROM samples WHERE started_at >= :start GROUP BY target",
        {"start": at - timedelta(days=30)},
    )


def median_ms(fn: Callable[[], object], runs: int, before: Callable[[], None] = lambda: None) -> float:
    times = []
    for _ in range(runs):
        before()
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def create_database(admin_url: str, name: str) -> str:
    admin = make_engine(admin_url).url
    with psycopg.connect(
        host=admin.host, port=admin.port or 5432, user=admin.username, dbname=admin.database, autocommit=True
    ) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return admin.set(database=name).render_as_string(hide_password=False)


def drop_database(admin_url: str, name: str) -> None:
    admin = make_engine(admin_url).url
    with psycopg.connect(
        host=admin.host, port=admin.port or 5432, user=admin.username, dbname=admin.database, autocommit=True
    ) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def run_pages(engine: Engine, runs: int, naive_runs: int, only: str = "") -> list[tuple[str, float, float | None]]:
    import streamlit as st

    from dashboard import data
    from monitor.storage.queries import routes

    with engine.connect() as conn:
        last = conn.execute(text("SELECT max(last_sample_at) FROM agents")).scalar()
    at = (last or datetime.now(UTC)).replace(second=0, microsecond=0) + timedelta(minutes=1)
    loads: dict[str, Callable[[], object]] = {}
    for name, load in data.page_loads(at).items():
        loads[name] = load
        for days in (7, 30):  # beside each long routes window: its read before the daily tier (0008)
            if name == f"Routes: all models, {days} d":
                loads[f"{name}, hourly rollups only (before 0008)"] = lambda days=days: data.guarded(
                    routes.load_routes, data.engine(), at, timedelta(days=days), daily=False
                )
    wanted = [w.strip() for w in only.split(",")]
    loads = {name: load for name, load in loads.items() if any(w in name for w in wanted)}
    targets = data.targets()
    provider = targets[0].provider
    twenty = [t.id for t in targets if t.provider == provider][:20]
    naive = naive_queries(at, twenty, targets[0].id)
    naive["SLOs: every SLO and scope, 30 d"] = slo_naive(at)
    naive["firsttoken slo: 2 SLOs, 205 scopes, 30 d"] = slo_naive(at)
    from monitor.storage.queries.slo_report import slo_reports

    conf = data.settings()
    loads["firsttoken slo: 2 SLOs, 205 scopes, 30 d"] = lambda: slo_reports(
        data.engine(), conf.slos, conf.slo_targets, at
    )
    loads = {name: load for name, load in loads.items() if any(w in name for w in wanted)}
    rows = []
    for name, load in loads.items():
        load()  # warm the process (imports, connection pool), not the cache
        ms = median_ms(load, runs, before=st.cache_data.clear)
        naive_ms = None
        if name in naive:
            sql, params = naive[name]
            with engine.connect() as conn:
                conn.exec_driver_sql("SET jit = off")  # as the dashboard's own sessions
                naive_ms = median_ms(lambda sql=sql, params=params: conn.execute(text(sql), params).all(), naive_runs)
        rows.append((name, ms, naive_ms))
        print(f"  {name}: {ms:.0f} ms (naive {naive_ms or 0:.0f} ms)", file=sys.stderr)
    return rows


def table(rows: list[tuple[str, float, float | None]], header: str) -> str:
    lines = [header, "", "| page | query ms | naive ms | naive / query |", "| --- | ---: | ---: | ---: |"]
    for name, ms, naive in rows:
        ratio = f"{naive / ms:.1f}x" if naive else "—"
        lines.append(f"| {name} | {ms:.0f} | {f'{naive:.0f}' if naive else '—'} | {ratio} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=200)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--runs", type=int, default=5, help="timed runs per page (median reported)")
    parser.add_argument("--naive-runs", type=int, default=3)
    parser.add_argument("--admin-url", default=ADMIN_URL)
    parser.add_argument(
        "--only", default="", help="time only the pages whose name contains one of these (comma-separated)"
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--keep", action="store_true", help="keep the seeded database (its name is printed)")
    group.add_argument("--reuse", metavar="DBNAME", help="time an already seeded database")
    args = parser.parse_args(argv)

    name = args.reuse or f"firsttoken_bench_{uuid.uuid4().hex[:8]}"
    url = make_engine(args.admin_url).url.set(database=name).render_as_string(hide_password=False)
    if not args.reuse:
        url = create_database(args.admin_url, name)
    engine = make_engine(url, connect_args={"options": "-c jit=off"})
    try:
        if not args.reuse:
            migrate.upgrade(engine)
            t0 = time.perf_counter()
            print(f"seeding {name}: {args.targets} targets x {args.days} days at 1/min", file=sys.stderr)
            dashboard_seed.seed(
                engine,
                args.targets,
                args.days,
                datetime.now(UTC).replace(second=0, microsecond=0),
                lambda m: print(m, file=sys.stderr),
            )
            print(f"seeded in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        with engine.connect() as conn:
            samples = conn.execute(text("SELECT sum(samples) FROM rollups_hourly")).scalar() or 0
        os.environ["FIRSTTOKEN_DASHBOARD_DATABASE_URL"] = url
        import tempfile

        os.environ["FIRSTTOKEN_CONFIG"] = str(slo_config(Path(tempfile.mkdtemp()) / "firsttoken.yaml"))
        rows = run_pages(engine, args.runs, args.naive_runs, args.only)
        header = (
            f"Dashboard queries on {samples / 1e6:.1f} M samples ({args.targets} targets x {args.days} days at 1/min), "
            f"PostgreSQL, {os.cpu_count()} cores; median of {args.runs} cold runs (cache cleared), "
            f"naive = percentile_cont over raw samples, median of {args.naive_runs}."
        )
        print(table(rows, header))
        return 0
    finally:
        engine.dispose()
        if args.keep or args.reuse:
            print(f"database kept: {name}", file=sys.stderr)
        else:
            drop_database(args.admin_url, name)


if __name__ == "__main__":
    sys.exit(main())
