"""Per-target availability and typical TTFT by period: the Health and Timeline pages.

Availability is `ok / (samples - cancelled)`: a cancelled probe (the service
stopping mid-flight) says nothing about the provider.

"Typical TTFT" of a period is what can be summed in the database without
reading a single histogram: on rollups, the mean TTFT of ok probes with each
hour's slowest probe left out (so one spike cannot paint a period); on raw
samples (ranges under a day, `queries.tiers`), the exact median. Reading the histograms of 200
targets × 90 days would cost seconds; these sums cost one scan. A target is
judged against its own baseline, the median of its per-period values over the
range, so a model that is always slow is not "degraded" and one that doubles is.

That figure, and the hours with data a period stands on, are built hour by hour: a daily rollup row
keeps neither (its maximum is the day's, not each hour's), so the grid never reads the daily tier,
however long its range. The 90-day grid reads the covering index of the hourly rows instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np
from sqlalchemy import Engine, Integer, case, cast, distinct, func, select, true

from monitor.storage.models import RollupHourly
from monitor.storage.queries.dashfetch import cancelled_count, epoch_s, fetch_raw, fetch_rollups, fetch_rows
from monitor.storage.queries.histmatrix import hist_quantiles, value_quantiles
from monitor.storage.queries.tiers import reads_raw

_R = RollupHourly.__table__.c


@dataclass(frozen=True)
class PeriodGrid:
    """Rows follow `targets`, columns `period_starts`."""

    targets: tuple[str, ...]
    period_starts: tuple[datetime, ...]
    period: timedelta
    measured: np.ndarray  # samples minus cancelled
    failed: np.ndarray  # failures, cancelled left out
    typical_ttft_ms: np.ndarray  # NaN where no ok sample
    # name -> (measured, failed, typical TTFT) per target since the window's start
    window_totals: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=dict)
    # Hours with at least one measured probe: per target × period, and per target since each window's start.
    # What a figure over a period stands on: 6 h of data read as "24 h" would overstate it.
    hours_with_data: np.ndarray | None = None
    window_hours: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def baseline_ttft_ms(self) -> np.ndarray:
        if not self.targets or np.isnan(self.typical_ttft_ms).all():
            return np.full(len(self.targets), np.nan)
        with np.errstate(all="ignore"):
            return np.array([np.nanmedian(r) if not np.isnan(r).all() else np.nan for r in self.typical_ttft_ms])

    def availability(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.measured > 0, 1 - self.failed / np.maximum(self.measured, 1), np.nan)

    def latency_ratio(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.typical_ttft_ms / self.baseline_ttft_ms[:, None]


def _slot(engine: Engine, step: float):
    """Period number of each rollup hour: floor(epoch / step)."""
    value = (epoch_s(_R.hour, engine) + 0.5) / step  # + 0.5 s: SQLite's julianday epoch lands µs short of the hour
    # PostgreSQL's float -> int cast rounds; SQLite's truncates, which is floor for positive epochs.
    return func.floor(value) if engine.dialect.name == "postgresql" else cast(value, Integer)


def grid(
    engine: Engine,
    start: datetime,
    end: datetime,
    period: timedelta,
    target_ids: Sequence[str] | None = None,
    windows: dict[str, datetime] | None = None,
) -> PeriodGrid:
    """The grid from the tier `queries.tiers` gives [start, end): raw samples under a day, else the
    hourly rollups (never the daily tier: see the module docstring). `windows` are summed on the
    rollups only."""
    if reads_raw(start, end) and not windows:
        return raw_period_grid(engine, start, end, period, target_ids)
    return period_grid(engine, start, end, period, target_ids, windows)


def period_grid(
    engine: Engine,
    start: datetime,
    end: datetime,
    period: timedelta,
    target_ids: Sequence[str] | None = None,
    windows: dict[str, datetime] | None = None,
) -> PeriodGrid:
    """Hourly rollups summed per period (whole hours, aligned to UTC midnight).

    `windows` {name: since} adds exact availability totals since each moment,
    computed in the same scan (the uptime figures of the Health page).
    """
    step = period.total_seconds()
    origin = (start.timestamp() // step) * step
    n = max(1, int(np.ceil((end.timestamp() - origin) / step)))
    cancelled = cancelled_count()
    many = _R.ttft_ms_count > 1
    slot = _slot(engine, step)
    measured = _R.samples - cancelled
    failed = _R.samples - _R.ok_count - cancelled
    # Hourly periods are rows already (one per agent): summing them here is cheaper than a
    # HashAggregate of 30,000 single-row groups in the database.
    grouped = step > 3600
    values = [
        measured,
        failed,
        func.coalesce(_R.ttft_ms_sum, 0.0) - case((many, _R.ttft_ms_max), else_=0.0),
        case((many, _R.ttft_ms_count - 1), else_=_R.ttft_ms_count),
    ]

    def hours(when):
        # Distinct hours: several agents write a row each for the same hour.
        if grouped:
            return func.count(distinct(case((when & (measured > 0), _R.hour))))
        return case((when & (measured > 0), 1), else_=0)

    cols = [_R.target, slot.label("slot"), *(func.sum(v) if grouped else v for v in values), hours(true())]
    windows = windows or {}
    for since in windows.values():
        recent = _R.hour >= since
        cols += [func.sum(v).filter(recent) if grouped else case((recent, v), else_=0) for v in values]
        cols.append(hours(recent))
    query = select(*cols).where(_R.hour >= datetime.fromtimestamp(origin, UTC), _R.hour < end)
    if target_ids is not None:
        query = query.where(_R.target.in_(list(target_ids)))
    rows = fetch_rows(engine, query.group_by(_R.target, "slot") if grouped else query)
    targets = tuple(sorted({r[0] for r in rows}))
    index = {t: i for i, t in enumerate(targets)}
    width = len(values) + 1  # the sums, then hours with data
    grid = np.zeros((2 + width * (1 + len(windows)), len(targets), n))
    if rows:
        cols_ = list(zip(*rows, strict=True))
        ti = np.fromiter((index[t] for t in cols_[0]), dtype=np.int64, count=len(rows))
        si = np.clip(np.array(cols_[1], dtype=float).astype(np.int64) - int(origin // step), 0, n - 1)
        for k in range(2, len(cols_)):
            np.add.at(grid[k], (ti, si), np.array([v or 0 for v in cols_[k]], dtype=float))
    per_period_h = step / 3600
    covered = np.minimum(grid[6], per_period_h)  # ungrouped rows: one per agent and hour
    with np.errstate(invalid="ignore", divide="ignore"):
        typical = np.where(grid[5] > 0, grid[4] / np.maximum(grid[5], 1), np.nan)
        totals, window_hours = {}, {}
        for i, name in enumerate(windows):
            base = 2 + width * (1 + i)
            m, f, t_sum, t_n = (grid[base + k].sum(axis=1) for k in range(4))
            totals[name] = (
                m.astype(np.int64),
                f.astype(np.int64),
                np.where(t_n > 0, t_sum / np.maximum(t_n, 1), np.nan),
            )
            window_hours[name] = np.minimum(grid[base + 4], per_period_h).sum(axis=1).astype(np.int64)
    starts = tuple(datetime.fromtimestamp(origin + i * step, UTC) for i in range(n))
    return PeriodGrid(
        targets,
        starts,
        period,
        grid[2].astype(np.int64),
        grid[3].astype(np.int64),
        typical,
        totals,
        covered.astype(np.int64),
        window_hours,
    )


def raw_period_grid(
    engine: Engine, start: datetime, end: datetime, period: timedelta, target_ids: Sequence[str] | None = None
) -> PeriodGrid:
    """The same grid from raw samples (ranges under a day); typical TTFT is the exact median."""
    step = period.total_seconds()
    origin = (start.timestamp() // step) * step
    n = max(1, int(np.ceil((end.timestamp() - origin) / step)))
    raw = fetch_raw(engine, datetime.fromtimestamp(origin, UTC), end, target_ids, metrics=("ttft_ms",))
    n_t = len(raw.targets)
    slot = np.clip(((raw.t_s - origin) // step).astype(np.int64), 0, n - 1)
    group = raw.target * n + slot
    size = n_t * n
    measured = np.bincount(group, weights=~raw.cancelled, minlength=size).reshape(n_t, n).astype(np.int64)
    failed = np.bincount(group, weights=~raw.ok & ~raw.cancelled, minlength=size).reshape(n_t, n).astype(np.int64)
    q, _ = value_quantiles(raw.metrics["ttft_ms"], group, size, (0.5,))
    starts = tuple(datetime.fromtimestamp(origin + i * step, UTC) for i in range(n))
    return PeriodGrid(raw.targets, starts, period, measured, failed, q[:, 0].reshape(n_t, n))


@dataclass(frozen=True)
class Current:
    """Every target's last hours against the day before them: medians from the rollup histograms."""

    targets: tuple[str, ...]
    measured: np.ndarray
    failed: np.ndarray
    ttft_p50_ms: np.ndarray  # the recent window; NaN without an ok probe
    baseline_ttft_p50_ms: np.ndarray  # the 24 hours before it


def current(engine: Engine, now: datetime, window: timedelta, baseline: timedelta = timedelta(hours=24)) -> Current:
    """Medians, not means: with 30-60 probes an hour, two spikes move a mean by half."""
    span_s = 3600 * (int((window + baseline).total_seconds() // 3600) + 2)  # one bucket: a row per target
    recent = fetch_rollups(engine, now - window, now, hists=("ttft_ms",), bucket_s=span_s)
    before = fetch_rollups(engine, now - window - baseline, now - window, hists=("ttft_ms",), bucket_s=span_s)
    targets = tuple(sorted(set(recent.targets) | set(before.targets)))
    index = {t: i for i, t in enumerate(targets)}
    n = len(targets)

    def per_target(rows):
        code = np.array([index[t] for t in rows.targets] or [0], dtype=np.int64)
        return code[rows.target] if len(rows) else rows.target

    g_recent, g_before = per_target(recent), per_target(before)
    q_now, _ = hist_quantiles(recent.hists["ttft_ms"], g_recent, n, (0.5,))
    q_base, _ = hist_quantiles(before.hists["ttft_ms"], g_before, n, (0.5,))
    measured = np.bincount(g_recent, weights=recent.samples - recent.cancelled, minlength=n).astype(np.int64)
    failed = np.bincount(g_recent, weights=recent.samples - recent.ok - recent.cancelled, minlength=n).astype(np.int64)
    return Current(targets, measured, failed, q_now[:, 0], q_base[:, 0])
