"""Seed a throwaway PostgreSQL database with months of synthetic samples, fast.

Used by `benchmarks/dashboard.py`. Values are generated per day with numpy
(lognormal TTFT with a daily cycle, 2% spikes of 3-15x, ~0.6% errors, rare
cancellations, and a few incidents: a region that slows down, a model answering
429s, a provider-region currently degraded), then written with binary COPY
straight into each day's partition (no routing through the parent table).

Rollups are built with the storage code itself (`monitor.storage.rollups.rollup_hours`,
the same function the service's leader runs), so the benchmark reads exactly the
rows production would have; it costs about 0.15 s per hour of 200 targets.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import repeat

import numpy as np
from sqlalchemy import Engine, text

from monitor.sample import target_id
from monitor.storage.ingest import COPY_TYPES
from monitor.storage.partitions import partition_name
from monitor.storage.rollups import rollup_hours
from monitor.storage.rows import SAMPLE_COLUMNS

PROVIDERS = {  # 5 providers x 10 models x 2 regions x 2 prompts = 200 targets
    "openai": (
        "gpt-4o-mini",
        "gpt-4o",
        "gpt-4.1-mini",
        "gpt-4.1",
        "gpt-4.1-nano",
        "o3",
        "o4-mini",
        "gpt-5",
        "gpt-5-mini",
        "gpt-5-pro",
    ),
    "anthropic": (
        "claude-3-5-haiku",
        "claude-3-7-sonnet",
        "claude-haiku-4",
        "claude-sonnet-4",
        "claude-haiku-4-5",
        "claude-opus-4",
        "claude-3-haiku",
        "claude-sonnet-4-5",
        "claude-instant",
        "claude-opus-4-1",
    ),
    "gemini": (
        "gemini-2.0-flash",
        "gemini-2.5-pro",
        "gemini-2.5-flash",
        "gemini-1.5-pro",
        "gemini-2.5-flash-lite",
        "gemini-3-pro",
        "gemini-2.0-flash-lite",
        "gemini-1.5-flash-8b",
        "gemma-3-27b",
        "gemini-exp",
    ),
    "bedrock": (
        "claude-3-5-haiku",
        "llama-3.1-70b",
        "nova-lite",
        "nova-pro",
        "nova-micro",
        "llama-3.1-405b",
        "mistral-7b",
        "claude-3-5-sonnet",
        "titan-lite",
        "command-r-plus",
    ),
    "mistral": (
        "mistral-small",
        "mistral-large",
        "ministral-8b",
        "codestral",
        "ministral-3b",
        "pixtral-large",
        "open-mistral-nemo",
        "magistral-medium",
        "devstral-small",
        "mistral-medium",
    ),
}
REGIONS = ("us-east-1", "eu-west-1")
PROMPTS = {"short": (17, 64), "rag-4k": (4100, 128)}  # input tokens, output tokens
AGENT = "bench"
ERROR_KINDS = ("timeout", "server_error", "rate_limited", "connect", "stream_error")


@dataclass(frozen=True)
class SeedTarget:
    provider: str
    model: str
    region: str
    prompt: str
    ttft_ms: float  # median at the daily mean
    tps: float

    @property
    def id(self) -> str:
        return target_id(self.provider, self.model, self.region, self.prompt)


def make_targets(n: int, seed: int = 7) -> list[SeedTarget]:
    """`n` targets (at most 200 distinct with these lists), spread over the providers."""
    rng = np.random.default_rng(seed)
    cells = []
    for provider, models in PROVIDERS.items():
        for i, model in enumerate(models):
            small = i % 2 == 0
            for region in REGIONS:
                for prompt in PROMPTS:
                    base = rng.uniform(220, 420) if small else rng.uniform(550, 1200)
                    base *= 2.6 if prompt == "rag-4k" else 1.0
                    base *= 1.15 if region == "eu-west-1" else 1.0
                    tps = rng.uniform(110, 180) if small else rng.uniform(35, 75)
                    cells.append(SeedTarget(provider, model, region, prompt, round(base, 1), round(tps, 1)))
    # Round-robin over providers so a scaled-down run still covers all of them.
    by_provider = [[c for c in cells if c.provider == p] for p in PROVIDERS]
    cells = [group[i] for i in range(max(map(len, by_provider))) for group in by_provider if i < len(group)]
    if n > len(cells):
        raise ValueError(f"at most {len(cells)} targets")
    return sorted(cells[:n], key=lambda t: t.id)


def incidents(targets: list[SeedTarget], now: datetime) -> list[tuple[np.ndarray, datetime, datetime, float, float]]:
    """(target mask, start, end, ttft factor, error probability): the stories the pages should show."""
    ids = np.array([t.id for t in targets])
    prov = np.array([f"{t.provider}@{t.region}" for t in targets])
    model = np.array([f"{t.provider}/{t.model}" for t in targets])
    return [
        (prov == "bedrock@eu-west-1", now - timedelta(days=5, hours=3), now - timedelta(days=4, hours=21), 2.5, 0.02),
        (
            model == "mistral/mistral-large",
            now - timedelta(days=2, hours=6),
            now - timedelta(days=2, hours=3),
            1.0,
            0.4,
        ),
        (prov == "anthropic@us-east-1", now - timedelta(minutes=50), now + timedelta(hours=1), 2.2, 0.03),
        (ids == ids[0], now - timedelta(days=12), now - timedelta(days=11, hours=20), 1.0, 0.95),
    ]


def day_columns(targets: list[SeedTarget], day_start: datetime, now: datetime, rng: np.random.Generator) -> dict:
    """Every column of one day's samples as arrays (only minutes before `now`)."""
    minutes = int(min(1440, max(0, (now - day_start).total_seconds() // 60)))
    n_t = len(targets)
    minute = np.repeat(np.arange(minutes), n_t)
    tidx = np.tile(np.arange(n_t), minutes)
    n = minute.size
    # Each target starts at its own phase inside the minute, like the scheduler spreads them.
    offset_s = minute * 60.0 + (tidx * 59.0 / max(n_t, 1)) + rng.uniform(0, 0.2, n)
    epoch = day_start.timestamp() + offset_s
    hour_of_day = (offset_s / 3600.0) % 24
    base = np.array([t.ttft_ms for t in targets])[tidx]
    diurnal = 1 + 0.15 * np.sin(2 * np.pi * (hour_of_day - 15) / 24)
    ttft = base * diurnal * rng.lognormal(0, 0.35, n)
    spikes = rng.random(n) < 0.02
    ttft[spikes] *= rng.uniform(3, 15, spikes.sum())
    err_p = np.full(n, 0.006)
    for mask, start, end, factor, p_err in incidents(targets, now):
        hit = mask[tidx] & (epoch >= start.timestamp()) & (epoch < end.timestamp())
        ttft[hit] *= factor
        err_p[hit] = p_err
    failed = rng.random(n) < err_p
    cancelled = ~failed & (rng.random(n) < 0.0005)
    ok = ~failed & ~cancelled
    kinds = np.array((*ERROR_KINDS, "cancelled"), dtype=object)
    kind_idx = rng.integers(0, len(ERROR_KINDS), n)
    if any(m.any() and p == 0.4 for m, *_, p in incidents(targets, now)):
        kind_idx[failed & (err_p == 0.4)] = ERROR_KINDS.index("rate_limited")
    kind_idx[cancelled] = len(ERROR_KINDS)
    error_kind = np.where(ok, None, kinds[kind_idx])
    tps = np.array([t.tps for t in targets])[tidx] * rng.lognormal(0, 0.12, n)
    inp = np.array([PROMPTS[t.prompt][0] for t in targets])[tidx]
    out = np.array([PROMPTS[t.prompt][1] for t in targets])[tidx]
    total = ttft + (out - 1) / tps * 1000.0
    tname = np.array([t.id for t in targets], dtype=object)
    day = f"{day_start:%Y%m%d}"
    fields = {f: np.array([getattr(t, f) for t in targets], dtype=object) for f in ("provider", "model", "region")}
    prompt = np.array([t.prompt for t in targets], dtype=object)
    return {
        "id": [f"{day}-{m:04d}-{t:04d}" for m, t in zip(minute.tolist(), tidx.tolist(), strict=True)],
        "started_at": epoch,
        "target": tname[tidx],
        "provider": fields["provider"][tidx],
        "model": fields["model"][tidx],
        "region": fields["region"][tidx],
        "prompt": prompt[tidx],
        "ok": ok,
        "error_kind": error_kind,
        "ttfb_ms": np.where(ok, ttft * 0.8, np.nan),
        "ttft_ms": np.where(ok, ttft, np.nan),
        "ttft_answer_ms": np.where(ok, ttft, np.nan),
        "total_ms": np.where(ok, total, np.nan),
        "output_tokens": np.where(ok, out, -1),
        "input_tokens": inp,
        "tps": np.where(ok, tps, np.nan),
        "chunks": np.where(ok, out, 0),
    }


def _nullable(values: np.ndarray) -> list:
    """Floats with NaN for NULL, or ints with -1 for NULL, as a list with None."""
    out = values.astype(object)
    out[np.isnan(values) if values.dtype.kind == "f" else values < 0] = None
    return out.tolist()


def copy_day(engine: Engine, cols: dict, day_start: datetime) -> int:
    n = len(cols["id"])
    if n == 0:
        return 0
    ok = cols["ok"]
    columns = {
        **{k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in cols.items()},
        "started_at": [datetime.fromtimestamp(s, UTC) for s in cols["started_at"].tolist()],
        "agent": repeat(AGENT, n),
        "tokens_source": np.where(ok, "usage", None).tolist(),
        "http_status": np.where(ok, 200, 500).tolist(),
    }
    for name in ("ttfb_ms", "ttft_ms", "ttft_answer_ms", "total_ms", "tps", "output_tokens"):
        columns[name] = _nullable(cols[name])
    ordered = [columns[name] if name in columns else repeat(None, n) for name in SAMPLE_COLUMNS]
    table = partition_name(day_start.date())
    end = day_start + timedelta(days=1)
    with engine.begin() as conn:
        # Load a bare table, then attach it: the partition's indexes are then built
        # once, sorted, instead of row by row (3-4x faster for a whole day).
        conn.exec_driver_sql(f"CREATE TABLE {table} (LIKE samples INCLUDING DEFAULTS)")
        conn.exec_driver_sql(
            f"ALTER TABLE {table} ADD CONSTRAINT {table}_day "
            f"CHECK (started_at >= '{day_start.isoformat()}' AND started_at < '{end.isoformat()}')"
        )
        cursor = conn.connection.dbapi_connection.cursor()
        with cursor.copy(f"COPY {table} ({', '.join(SAMPLE_COLUMNS)}) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(COPY_TYPES)
            for row in zip(*ordered, strict=True):
                copy.write_row(row)
        cursor.close()
        conn.exec_driver_sql(
            f"ALTER TABLE samples ATTACH PARTITION {table} "
            f"FOR VALUES FROM ('{day_start.isoformat()}') TO ('{end.isoformat()}')"
        )
        conn.exec_driver_sql(f"ALTER TABLE {table} DROP CONSTRAINT {table}_day")
    return n


def seed(
    engine: Engine, n_targets: int, days: int, now: datetime, log: Callable[[str], None] = print
) -> list[SeedTarget]:
    """Samples, targets, agent and rollups for `days` days up to `now`."""
    targets = make_targets(n_targets)
    first_day = (now - timedelta(days=days)).replace(hour=0, minute=0, second=0, microsecond=0)
    day_starts = [first_day + timedelta(days=i) for i in range((now - first_day).days + 1)]
    rng = np.random.default_rng(42)
    t0, total = time.perf_counter(), 0
    start = now - timedelta(days=days)
    for day_start in day_starts:
        cols = day_columns(targets, day_start, now, rng)
        keep = cols["started_at"] >= start.timestamp()
        cols = {k: (np.asarray(v, dtype=object)[keep] if isinstance(v, list) else v[keep]) for k, v in cols.items()}
        cols["id"] = cols["id"].tolist()
        total += copy_day(engine, cols, day_start)
        log(f"  {day_start:%Y-%m-%d}: {total:,} samples, {total / (time.perf_counter() - t0):,.0f}/s")
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO targets (id, provider, model, region, prompt, protocol, first_seen, last_seen) "
                "VALUES (:id, :provider, :model, :region, :prompt, 'openai-chat', :first, :last)"
            ),
            [{**t.__dict__, "id": t.id, "first": start, "last": now} for t in targets],
        )
        conn.execute(
            text("INSERT INTO agents (name, last_seen, last_sample_at, healthy) VALUES (:a, :n, :n, true)"),
            {"a": AGENT, "n": now},
        )
    seed_alerts(engine, targets, now)
    t1 = time.perf_counter()
    rows = rollup_hours(engine, start, now + timedelta(hours=1), now=now)
    log(f"  rollups: {rows:,} rows in {time.perf_counter() - t1:.0f} s")
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("VACUUM ANALYZE")
    return targets


def seed_alerts(engine: Engine, targets: list[SeedTarget], now: datetime) -> None:
    """Alert rows for the incidents, as the alert engine would have left them."""
    rows = []
    for mask, start, end, factor, p_err in incidents(targets, now):
        for t in np.array(targets, dtype=object)[mask]:
            resolved = end if end < now else None
            rows.append(
                {
                    "rule": "errors" if p_err > 0.1 else "ttft-regression",
                    "scope_kind": "target",
                    "scope_key": t.id,
                    "provider": t.provider,
                    "model": t.model,
                    "region": t.region,
                    "prompt": t.prompt,
                    "state": "resolved" if resolved else "firing",
                    "severity": "page",
                    "metric": "error_rate" if p_err > 0.1 else "ttft_ms",
                    "value": p_err if p_err > 0.1 else t.ttft_ms * factor,
                    "baseline": 0.006 if p_err > 0.1 else t.ttft_ms,
                    "started_at": start + timedelta(minutes=4),
                    "fired_at": start + timedelta(minutes=6),
                    "resolved_at": resolved + timedelta(minutes=5) if resolved else None,
                    "summary": f"{t.id}: {'error rate' if p_err > 0.1 else 'TTFT'} up",
                }
            )
    if rows:
        cols = ", ".join(rows[0])
        with engine.begin() as conn:
            conn.execute(text(f"INSERT INTO alerts ({cols}) VALUES ({', '.join(':' + c for c in rows[0])})"), rows)
