"""The dashboard's Overview: every target's last hour against its own baseline.

The last hour is read raw (12,000 rows for 200 targets at 1/min); the baseline
is the median TTFT of the 24 hours before it, from the rollups. The state
window is the last 15 minutes, or the last three samples when a target probes
less often than that, so a 5-minute target is judged on more than one probe.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
from sqlalchemy import Engine, distinct, func, select

from monitor.storage.models import RollupHourly
from monitor.storage.queries.dashfetch import fetch_raw, fetch_rollups, fetch_rows
from monitor.storage.queries.histmatrix import hist_quantiles, value_quantiles
from monitor.storage.queries.targets import TargetRef

WINDOW = timedelta(hours=1)
STATE_WINDOW = timedelta(minutes=15)
STATE_MIN_SAMPLES = 3
BASELINE = timedelta(hours=24)
FULL_SLACK = timedelta(minutes=10)
_R = RollupHourly.__table__.c


@dataclass(frozen=True)
class TargetNow:
    target: TargetRef
    samples: int  # in the last hour, cancelled left out
    failed: int
    ttft_p50_ms: float | None
    ttft_p90_ms: float | None
    tps_p50: float | None
    recent_measured: int  # state window
    recent_failed: int
    recent_ttft_p50_ms: float | None
    baseline_ttft_p50_ms: float | None
    last_sample_at: datetime | None
    baseline_hours: int = 0  # hours of the 24 h baseline with data: a baseline from 2 h is not a day's


@dataclass(frozen=True)
class Headline:
    provider: str
    prompt: str
    samples: int
    failed: int
    ttft_p50_ms: float | None
    ttft_p90_ms: float | None
    tps_p50: float | None
    covered_s: float = 0.0  # how much of the last hour has data: from its first sample to now


@dataclass(frozen=True)
class Overview:
    now: datetime
    targets: tuple[TargetNow, ...]
    headlines: tuple[Headline, ...]


def _f(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def overview(engine: Engine, targets: Sequence[TargetRef], now: datetime | None = None) -> Overview:
    now = now or datetime.now(UTC)
    refs = sorted(targets, key=lambda t: t.id)
    index = {t.id: i for i, t in enumerate(refs)}
    n = len(refs)
    raw = fetch_raw(engine, now - WINDOW, now + timedelta(seconds=1))
    code_to_ref = np.array([index.get(tid, -1) for tid in raw.targets], dtype=np.int64)
    mapped = code_to_ref[raw.target] if len(raw) else np.zeros(0, np.int64)
    keep = mapped >= 0  # samples of targets no longer configured are left out
    tix = mapped[keep]
    t_s = raw.t_s[keep]
    measured = ~raw.cancelled[keep]
    failed = ~raw.ok[keep] & measured
    ttft, tps = raw.metrics["ttft_ms"][keep], raw.metrics["tps"][keep]

    q_ttft, _ = value_quantiles(ttft, tix, n, (0.5, 0.9))
    q_tps, _ = value_quantiles(tps, tix, n, (0.5,))
    samples = np.bincount(tix, weights=measured, minlength=n)
    fails = np.bincount(tix, weights=failed, minlength=n)
    last = np.full(n, np.nan)
    np.fmax.at(last, tix, t_s)

    # State window: the last 15 minutes, widened per target to its last 3 measured samples.
    order = np.lexsort((-t_s, tix))
    rank = np.empty_like(order)
    if order.size:
        sorted_t = tix[order]
        first_of = np.r_[0, np.flatnonzero(np.diff(sorted_t)) + 1]
        starts = np.repeat(first_of, np.diff(np.r_[first_of, order.size]))
        rank[order] = np.arange(order.size) - starts
    recent = (t_s >= (now - STATE_WINDOW).timestamp()) | (rank < STATE_MIN_SAMPLES)
    r_meas = np.bincount(tix[recent], weights=measured[recent], minlength=n)
    r_fail = np.bincount(tix[recent], weights=failed[recent], minlength=n)
    q_recent, _ = value_quantiles(ttft[recent], tix[recent], n, (0.5,))

    base = fetch_rollups(
        engine, now - WINDOW - BASELINE, now - WINDOW, [t.id for t in refs], hists=("ttft_ms",), bucket_s=2 * 86400
    )
    base_code = np.array([index[t] for t in base.targets] or [0], dtype=np.int64)
    q_base, _ = hist_quantiles(base.hists["ttft_ms"], base_code[base.target] if len(base) else base.target, n, (0.5,))
    base_hours = _hours_with_data(engine, now - WINDOW - BASELINE, now - WINDOW, [t.id for t in refs])

    rows = tuple(
        TargetNow(
            target=ref,
            samples=int(samples[i]),
            failed=int(fails[i]),
            ttft_p50_ms=_f(q_ttft[i, 0]),
            ttft_p90_ms=_f(q_ttft[i, 1]),
            tps_p50=_f(q_tps[i, 0]),
            recent_measured=int(r_meas[i]),
            recent_failed=int(r_fail[i]),
            recent_ttft_p50_ms=_f(q_recent[i, 0]),
            baseline_ttft_p50_ms=_f(q_base[i, 0]),
            last_sample_at=None if np.isnan(last[i]) else datetime.fromtimestamp(last[i], UTC),
            baseline_hours=base_hours.get(ref.id, 0),
        )
        for i, ref in enumerate(refs)
    )
    return Overview(now, rows, _headlines(refs, tix, measured, failed, ttft, tps, t_s, now.timestamp()))


def _hours_with_data(engine: Engine, start: datetime, end: datetime, target_ids: list[str]) -> dict[str, int]:
    """Distinct rollup hours with a sample, per target (several agents write a row each per hour)."""
    query = (
        select(_R.target, func.count(distinct(_R.hour)))
        .where(_R.hour >= start, _R.hour < end, _R.samples > 0, _R.target.in_(target_ids))
        .group_by(_R.target)
    )
    return {target: int(hours) for target, hours in fetch_rows(engine, query)} if target_ids else {}


def _headlines(refs, tix, measured, failed, ttft, tps, t_s, now_s: float) -> tuple[Headline, ...]:
    keys = sorted({(r.provider, r.prompt) for r in refs})
    key_index = {k: i for i, k in enumerate(keys)}
    of_ref = np.array([key_index[(r.provider, r.prompt)] for r in refs] or [0], dtype=np.int64)
    g = of_ref[tix] if tix.size else tix
    m = len(keys)
    q_ttft, _ = value_quantiles(ttft, g, m, (0.5, 0.9))
    q_tps, _ = value_quantiles(tps, g, m, (0.5,))
    samples = np.bincount(g, weights=measured, minlength=m)
    fails = np.bincount(g, weights=failed, minlength=m)
    first = np.full(m, np.nan)
    np.fmin.at(first, g, t_s)
    covered = np.where(np.isnan(first), 0.0, now_s - first)
    # Data from the window's first minutes on cover it all: a 5-minute target's first probe lands up to 5 min in.
    covered = np.where(covered >= WINDOW.total_seconds() - FULL_SLACK.total_seconds(), WINDOW.total_seconds(), covered)
    return tuple(
        Headline(
            p,
            pr,
            int(samples[i]),
            int(fails[i]),
            _f(q_ttft[i, 0]),
            _f(q_ttft[i, 1]),
            _f(q_tps[i, 0]),
            float(min(covered[i], WINDOW.total_seconds())),
        )
        for (p, pr), i in key_index.items()
    )
