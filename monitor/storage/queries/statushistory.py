"""What the public status shows of each target, by the quorum (`monitor.availability`): the last
minutes from raw samples, per minute; 90 days from the rollups, per hour; the TTFT the quorum saw.

Every figure is built per agent first and then through the quorum rule, never from the agents'
probes pooled: one vantage point's broken path must not colour a public bar.

- `live`: a window under a day (the current status): raw samples, each target's minutes.
- `daily`: N days: availability from the hourly rollups (`queries.tiers` with no daily tier: the
  rule needs each hour's per-agent counts, which a daily row has merged), each day the sum of its
  hours; the median TTFT of each day from the tier plan (`tierread.read_plan`: the daily tier's
  packed histograms for every built day, hours for the rest), per agent, then the quorum's.
- `excluded` (both): per target id, the (start, end) epoch-second intervals of maintenance windows
  over it: time inside them counts neither up nor down (DESIGN §16).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np
from sqlalchemy import Engine, select

from monitor import availability
from monitor.storage.models import RollupHourly
from monitor.storage.queries.dashfetch import cancelled_count, epoch_s, fetch_raw, fetch_rows, fetch_tiers
from monitor.storage.queries.histmatrix import value_quantiles
from monitor.storage.queries.tierread import in_spans, read_plan
from monitor.storage.queries.tiers import plan

_R = RollupHourly.__table__.c
MINUTE_S, HOUR_S, DAY_S = 60.0, 3600.0, 86400.0
Intervals = Mapping[str, Sequence[tuple[float, float]]]


@dataclass(frozen=True)
class Live:
    """Per target (`targets`): minutes probed and down (the quorum's, fractional where an agent
    probed more than once a minute), and the quorum's median TTFT over the window."""

    targets: tuple[str, ...]
    probed_min: np.ndarray
    down_min: np.ndarray
    ttft_p50_ms: np.ndarray  # NaN without an ok probe
    agents: np.ndarray  # agents that probed it in the window


@dataclass(frozen=True)
class Daily:
    """Rows follow `targets`, columns `day_starts` (UTC midnights). Hours probed and down per day
    (fractions of hours), the quorum's median TTFT per day; per named window, hours probed and
    down since its start."""

    targets: tuple[str, ...]
    day_starts: tuple[datetime, ...]
    probed_h: np.ndarray
    down_h: np.ndarray
    ttft_p50_ms: np.ndarray
    windows: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    maintenance_h: np.ndarray | None = None  # hours inside our maintenance windows, per day


def _index(names: Sequence[str], wanted: Sequence[str]) -> np.ndarray:
    """Each of `names` as its row in `wanted` (-1: not wanted)."""
    rows = {t: i for i, t in enumerate(wanted)}
    return np.array([rows.get(n, -1) for n in names], dtype=np.int64)


def _covered(targets: Sequence[str], starts_s: np.ndarray, length_s: float, excluded: Intervals | None) -> np.ndarray:
    """(targets × buckets): the share of each bucket in a maintenance window over the target; `starts_s`
    is the buckets' starts, or one row of them per target."""
    starts = np.broadcast_to(np.asarray(starts_s, dtype=float), (len(targets), np.shape(starts_s)[-1]))
    out = np.zeros(starts.shape)
    for i, t in enumerate(targets):
        if excluded and excluded.get(t):
            out[i] = availability.covered_share(starts[i], length_s, excluded[t])
    return out


def minute_phase(target: np.ndarray, t_s: np.ndarray, n_t: int) -> np.ndarray:
    """Per target, where in the minute its probes start (seconds, 0..60): the circular mean of their
    start times. Every agent probes a target on the same schedule (one phase per target), so minutes
    cut half a minute away from it hold each round's probes from every agent together, whatever the
    agents' scheduling lag: a round split over two minutes would leave each with fewer agents, and
    one agent alone could then be its minute's quorum."""
    angle = 2 * np.pi * np.mod(t_s, MINUTE_S) / MINUTE_S
    x = np.bincount(target, weights=np.cos(angle), minlength=n_t)[:n_t]
    y = np.bincount(target, weights=np.sin(angle), minlength=n_t)[:n_t]
    return np.mod(np.arctan2(y, x), 2 * np.pi) * MINUTE_S / (2 * np.pi)


def live(
    engine: Engine,
    start: datetime,
    end: datetime,
    targets: Sequence[str],
    excluded: Intervals | None = None,
) -> Live:
    """Each target's minutes in [start, end) (a range under a day: raw samples): those whose centre
    is in the range (`minute_phase`). Each minute's voters are the agents that probed the target in
    the range: an agent whose probe of a round is still in flight, or fell into the next minute,
    counts as seeing no failure there (alone in its minute, it would be its own quorum)."""
    n_t = len(targets)
    read_from = start - timedelta(seconds=MINUTE_S / 2)
    raw = fetch_raw(engine, read_from, end, list(targets), metrics=("ttft_ms",), by_agent=True)
    row = _index(raw.targets, targets)[raw.target] if len(raw) else np.zeros(0, dtype=np.int64)
    keep = row >= 0
    row, t_s = row[keep], raw.t_s[keep]
    agent = (raw.agent if raw.agent is not None else np.zeros(len(raw), dtype=np.int64))[keep]
    n_a = max(1, len(raw.agents))
    # Minute k of target i starts at origin[i] + 60 k, half a minute before its probes' phase.
    t0 = np.floor(read_from.timestamp() / MINUTE_S) * MINUTE_S
    origin = t0 + minute_phase(row, t_s, n_t) - MINUTE_S / 2 - MINUTE_S
    n_m = int(np.ceil((end.timestamp() - t0) / MINUTE_S)) + 2
    minute = np.clip(((t_s - origin[row]) // MINUTE_S).astype(np.int64), 0, n_m - 1)
    # One row per (target, minute, agent): its measured and failed probes.
    key = (row * n_m + minute) * n_a + agent
    cells, inverse = np.unique(key, return_inverse=True)
    measured = np.bincount(inverse, weights=(~raw.cancelled)[keep].astype(float), minlength=len(cells))
    failed = np.bincount(inverse, weights=(~raw.ok & ~raw.cancelled)[keep].astype(float), minlength=len(cells))
    pair = row * n_a + agent
    agents = np.bincount(np.unique(pair) // n_a, minlength=n_t)[:n_t]
    downtime = availability.bucket_downtime(cells // n_a, measured, failed, n_t * n_m, np.repeat(agents, n_m))
    starts = origin[:, None] + MINUTE_S * np.arange(n_m)[None, :]
    covered = _covered(targets, starts, MINUTE_S, excluded).reshape(-1)
    down, probed = availability.outside_maintenance(downtime, covered)
    counted = (starts + MINUTE_S / 2 >= start.timestamp()).reshape(-1)
    down, probed = down * counted, probed * counted
    # The quorum's median: each agent's median over the window, then the k-th highest.
    medians, _ = value_quantiles(raw.metrics["ttft_ms"][keep], pair, n_t * n_a, (0.5,))
    p50, _ = availability.quorum_statistic(np.repeat(np.arange(n_t), n_a), medians[:, 0], n_t)
    return Live(tuple(targets), probed.reshape(n_t, n_m).sum(axis=1), down.reshape(n_t, n_m).sum(axis=1), p50, agents)


def hourly_counts(engine: Engine, start: datetime, end: datetime, targets: Sequence[str]) -> list[tuple]:
    """(hour epoch s, target, agent, measured, failed) of every hourly rollup row in [start, end)."""
    spans = plan(start, end, raw=False).hours  # built hour by hour: no daily tier (queries.tiers, rule 3)
    cancelled = cancelled_count()
    query = select(
        epoch_s(_R.hour, engine),
        _R.target,
        _R.agent,
        _R.samples - cancelled,
        _R.samples - _R.ok_count - cancelled,
    ).where(in_spans(_R.hour, spans), _R.target.in_(list(targets)))
    return fetch_rows(engine, query)


def daily(
    engine: Engine,
    start: datetime,
    end: datetime,
    targets: Sequence[str],
    windows: Mapping[str, datetime] | None = None,
    excluded: Intervals | None = None,
) -> Daily:
    """Days from `start` (a UTC midnight) to `end`, each target's, by the quorum (see the module
    docstring); `windows` {name: since} sums hours since each moment (uptime over 24 h, 7 d ...)."""
    windows = dict(windows or {})
    n_t = len(targets)
    origin = start.timestamp()
    n_d = max(1, int(np.ceil((end.timestamp() - origin) / DAY_S)))
    n_h = n_d * 24
    rows = hourly_counts(engine, start, end, targets) if targets else []
    cols = list(zip(*rows, strict=True)) if rows else [()] * 5
    hour = np.clip(((np.round(np.array(cols[0], dtype=float)) - origin) // HOUR_S).astype(np.int64), 0, n_h - 1)
    row = _index(cols[1], targets) if rows else np.zeros(0, dtype=np.int64)
    keep = row >= 0
    group = (row * n_h + hour)[keep]
    measured = np.array(cols[3], dtype=float)[keep]
    failed = np.array(cols[4], dtype=float)[keep]
    # The primary key is (target, hour, agent): each row is one agent's hour already.
    downtime = availability.bucket_downtime(group, measured, failed, n_t * n_h)
    hour_starts = origin + HOUR_S * np.arange(n_h)
    covered = _covered(targets, hour_starts, HOUR_S, excluded).reshape(-1)
    down, probed = (a.reshape(n_t, n_h) for a in availability.outside_maintenance(downtime, covered))
    per_day = (n_t, n_d, 24)
    covered = covered.reshape(n_t, n_h)
    window_sums = {}
    for name, since in windows.items():
        recent = hour_starts >= since.timestamp() - 1e-6
        window_sums[name] = (probed[:, recent].sum(axis=1), down[:, recent].sum(axis=1))
    return Daily(
        tuple(targets),
        tuple(datetime.fromtimestamp(origin + d * DAY_S, UTC) for d in range(n_d)),
        probed.reshape(per_day).sum(axis=2),
        down.reshape(per_day).sum(axis=2),
        daily_ttft_p50(engine, start, end, targets, n_d),
        window_sums,
        covered.reshape(per_day).sum(axis=2),
    )


def daily_ttft_p50(engine: Engine, start: datetime, end: datetime, targets: Sequence[str], n_d: int) -> np.ndarray:
    """(targets × days): per day the k-th highest of the agents' median TTFT (k the quorum)."""
    n_t = len(targets)
    if not n_t:
        return np.zeros((0, n_d))
    rows = fetch_tiers(engine, read_plan(engine, start, end), list(targets), hists=("ttft_ms",), by_agent=True)
    n_a = max(1, len(rows.agents))
    day = np.clip(((rows.hour_s - start.timestamp()) // DAY_S).astype(np.int64), 0, n_d - 1)
    row = _index(rows.targets, targets)[rows.target] if len(rows) else np.zeros(0, dtype=np.int64)
    agent = rows.agent if rows.agent is not None else np.zeros(len(rows), dtype=np.int64)
    # Rows of no wanted target go to a spare group past the end.
    cell = np.where(row >= 0, (row * n_d + day) * n_a + agent, n_t * n_d * n_a)
    medians = rows.quantiles("ttft_ms", cell, n_t * n_d * n_a + 1, (0.5,))[:-1, 0]
    p50, _ = availability.quorum_statistic(np.repeat(np.arange(n_t * n_d), n_a), medians, n_t * n_d)
    return p50.reshape(n_t, n_d)


def day_start(moment: datetime, days_back: int) -> datetime:
    """The UTC midnight `days_back - 1` days before `moment`'s day: where `days_back` daily bars begin."""
    midnight = moment.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight - timedelta(days=days_back - 1)
