"""New samples for the detectors, in few queries whatever the number of targets.

Each series has a cursor (the newest `started_at` it has seen). Targets whose
cursors are recent share one time-range query over all samples (an index
range on `started_at`, a few day partitions on PostgreSQL); targets far
behind, or new ones warming up from history, are read in chunks by target
id. Only the columns the detectors use are read.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import NamedTuple

from sqlalchemy import Connection, or_, select

from monitor.sample import CHANGE_METRICS, SAMPLE_METRICS
from monitor.storage.models import SampleRow

_S = SampleRow.__table__.c
RECENT = timedelta(hours=1)  # cursors newer than this share the one range query
CHUNK = 500  # target ids per IN (...) query
METRIC_COLUMNS = SAMPLE_METRICS
LABEL_COLUMNS = CHANGE_METRICS  # kind: change
NOT_MEASURED = "cancelled"  # the service stopped mid-probe: not a measurement of the provider


class Point(NamedTuple):
    target: str
    agent: str
    started_at: datetime
    id: str
    ok: bool
    error_kind: str | None
    ttft_ms: float | None
    ttft_answer_ms: float | None
    total_ms: float | None
    tps: float | None
    served_by: str | None = None
    model_version: str | None = None
    system_fingerprint: str | None = None
    answer_fingerprint: str | None = None
    cache_state: str | None = None  # cache probes (DESIGN §13): cold | warm
    cache_hit: bool | None = None
    ttfb_ms: float | None = None  # with server_timing: the network part of a latency change (attribution.py)
    server_timing: dict | None = None

    def value(self, metric: str) -> float | str | None:
        """What the detector is fed: for error_rate 1.0 for a success, None for a failure;
        for a latency or tps rule the measurement, for a change rule the label, None when
        the probe failed (a failed probe's route is not the route that serves answers)."""
        if metric == "error_rate":
            return 1.0 if self.ok else None
        if metric == "cache_hit_ratio":  # 1 hit, 0 miss, None: not judged
            return None if not self.ok or self.cache_hit is None else float(self.cache_hit)
        return getattr(self, metric) if self.ok else None


_COLUMNS = [
    _S.target,
    _S.agent,
    _S.started_at,
    _S.id,
    _S.ok,
    _S.error_kind,
    *(_S[m] for m in METRIC_COLUMNS),
    *(_S[m] for m in LABEL_COLUMNS),
    _S.cache_state,
    _S.cache_hit,
    _S.ttfb_ms,
    _S.server_timing,
]


def fetch_new(
    conn: Connection,
    cursors: Mapping[str, datetime | None],
    *,
    floor: datetime,
    until: datetime,
    late: Late | None = None,
) -> dict[str, list[Point]]:
    """Samples started in (cursor, until] per target (cursor None or older than `floor`: from `floor`),
    and with `late`, the slow or failed ones started in the `late.back_s` before the cursor.

    Oldest first; cancelled probes are left out.
    """
    since = {t: floor if c is None or c < floor else c for t, c in cursors.items()}
    out: dict[str, list[Point]] = {t: [] for t in since}
    if not since:
        return out
    if late is not None:
        _collect_late(conn, since, late, out)
    recent = {t: s for t, s in since.items() if s >= until - RECENT}
    behind = sorted(t for t in since if t not in recent)
    if recent:
        query = _range(min(recent.values()), until)
        if len(recent) <= CHUNK:
            query = query.where(_S.target.in_(sorted(recent)))
        _collect(conn, query, since, out)
    for i in range(0, len(behind), CHUNK):
        chunk = behind[i : i + CHUNK]
        _collect(conn, _range(min(since[t] for t in chunk), until).where(_S.target.in_(chunk)), since, out)
    for points in out.values():
        points.sort(key=lambda p: (p.started_at, p.id))
    return out


class Late(NamedTuple):
    """Probes written after a read passed their start: a probe is written when it ends, so one that took
    longer than the engine's settle time can land behind faster ones already read (monitor.alerts.engine)."""

    back_s: Mapping[str, float]  # per target: how far before its cursor such a probe can have started
    slow_ms: float  # a probe that took less than this was written before any read passed its start


def _collect_late(conn: Connection, since: Mapping[str, datetime], late: Late, out: dict[str, list[Point]]) -> None:
    """The slow and failed probes started in (cursor - back_s, cursor]: one range query; a few rows, as
    only probes longer than `slow_ms` (or failed) qualify. Each series skips what it has already seen."""
    starts = {t: c - timedelta(seconds=late.back_s[t]) for t, c in since.items() if late.back_s.get(t, 0.0) > 0.0}
    if not starts:
        return
    slow = or_(_S.ok.is_(False), _S.total_ms.is_(None), _S.total_ms >= late.slow_ms)
    query = _range(min(starts.values()), max(since[t] for t in starts)).where(slow)
    if len(starts) <= CHUNK:
        query = query.where(_S.target.in_(sorted(starts)))
    _collect(conn, query, starts, out, upto=since)


def history(targets, since: datetime, until: datetime):
    """Every sample of `targets` started in (since, until], oldest first: a series rebuilt from history
    (SLO burns, monitor.alerts.slo_source) streams it rather than holding days of rows."""
    return _range(since, until).where(_S.target.in_(sorted(targets)))


def _range(start: datetime, until: datetime):
    return select(*_COLUMNS).where(_S.started_at > start, _S.started_at <= until).order_by(_S.started_at, _S.id)


def _collect(
    conn: Connection,
    query,
    since: Mapping[str, datetime],
    out: dict[str, list[Point]],
    upto: Mapping[str, datetime] | None = None,
) -> None:
    """The query's measured samples started in (since, upto] per target (upto: none, the query's own end)."""
    for row in conn.execute(query):
        point = Point(*row)
        cursor = since.get(point.target)
        if cursor is None or point.started_at <= cursor:
            continue  # not a configured target, or already seen
        if upto is not None and point.started_at > upto[point.target]:
            continue  # the late read's span ends at each target's own cursor
        if point.error_kind == NOT_MEASURED:
            continue
        out[point.target].append(point)
