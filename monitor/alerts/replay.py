"""`firsttoken backtest --samples`: the alert engine replayed over stored samples (DESIGN §15).

As promtool replays Prometheus's own rule manager, this replays firsttoken's own `AlertEngine`,
not a model of it: the samples are loaded into a scratch SQLite database and the engine evaluates
it in virtual rounds of the config's `alerting.evaluate_every`, with `now` at each round. Every
stage runs as it does live — quorum, own path, grouping, inhibition, silences of the config, holds
and repeats, SLO burns — so on the same samples and config it yields the alerts the live engine
wrote, to the round.

Rounds fall on multiples of the step since the Unix epoch (the demo's backfill evaluates on the
same grid). What cannot be replayed is said in the docs: silences added at run time
(`firsttoken silence add`) live in the production database, not in the config; agents that were
unhealthy are not in a samples file.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from monitor.alerts.engine import AlertEngine, options_for
from monitor.alerts.records import FIRING, FIRING_EVENT, RESOLVED, AlertRecord
from monitor.sample import Sample

FIRED, RESOLVED_CHANGE, INHIBITED, MUTED, ESCALATED = "fired", "resolved", "inhibited", "muted", "escalated"
BATCH = 5000  # samples per insert into the scratch database


@dataclass(frozen=True, slots=True)
class AlertChange:
    """One change of one alert, as `backtest --samples` prints it."""

    time: datetime  # the round that made it
    change: str  # fired | resolved | inhibited | muted | escalated
    rule: str
    slo: str | None
    scope: str  # the alert's scope key
    agent: str | None
    severity: str
    summary: str
    fired_at: datetime | None
    resolved_at: datetime | None
    record: AlertRecord | None = field(default=None, repr=False, compare=False)  # the alert as written

    def to_dict(self) -> dict[str, Any]:
        def iso(at: datetime | None) -> str | None:
            return None if at is None else at.astimezone(UTC).isoformat().replace("+00:00", "Z")

        return {
            "time": iso(self.time),
            "change": self.change,
            "rule": self.rule,
            "slo": self.slo,
            "scope": self.scope,
            "agent": self.agent,
            "severity": self.severity,
            "summary": self.summary,
            "fired_at": iso(self.fired_at),
            "resolved_at": iso(self.resolved_at),
        }


def select(config, *, rule: str | None = None, slo: str | None = None):
    """The config with only `rule` (or only `slo`) to replay, and no notifier: nothing leaves a replay."""
    if rule is not None:
        config = replace(config, alerts=tuple(r for r in config.alerts if r.name == rule), slos=())
    elif slo is not None:
        config = replace(config, alerts=(), slos=tuple(s for s in config.slos if s.name == slo))
    return replace(config, notifiers=())


def round_times(samples: Sequence[Sample], step_s: float, settle_s: float) -> list[datetime]:
    """The replay's rounds: every multiple of the step from the first sample until the last one has
    settled and been judged."""
    if not samples:
        return []
    first = min(s.started_at for s in samples).timestamp()
    last = max(s.started_at for s in samples).timestamp() + settle_s
    t = math.ceil(first / step_s) * step_s
    out = []
    while t <= last + step_s:
        out.append(datetime.fromtimestamp(t, UTC))
        t += step_s
    return out


def replay(samples: Sequence[Sample], config, *, step_s: float | None = None) -> Iterator[AlertChange]:
    """Each alert change, in round order, from the engine evaluating `samples` under `config`."""
    from monitor.storage import migrate
    from monitor.storage.db import make_engine
    from monitor.storage.ingest import BatchInserter

    step_s = step_s or config.alerting.evaluate_every_s
    ordered = sorted(samples, key=lambda s: (s.started_at, s.id))
    with tempfile.TemporaryDirectory(prefix="firsttoken-backtest-") as scratch:
        db = make_engine(f"sqlite:///{Path(scratch) / 'replay.db'}")
        try:
            migrate.upgrade(db)
            inserter = BatchInserter(db)
            for i in range(0, len(ordered), BATCH):
                inserter.insert(ordered[i : i + BATCH], now=ordered[-1].started_at)
            inserter.close()
            engine = AlertEngine(options_for(config.alerting))
            known: dict[tuple[str, str], AlertRecord] = {}
            for now in round_times(ordered, step_s, engine.options.settle_s):
                stats = engine.evaluate(db, config, now=now)
                for change in stats.applied:
                    yield from _changes(change, known, now)
        finally:
            db.dispose()


def _changes(change, known: dict[tuple[str, str], AlertRecord], now: datetime) -> Iterator[AlertChange]:
    """`fired` is a page (the firing notification went out); `inhibited` and `muted` an alert firing that
    nobody is told of; `resolved` the end of one that was announced as any of those."""
    record = change.record
    key = (record.rule, record.scope.key)
    before = known.get(key)
    if change.delete:
        known.pop(key, None)
        return
    if record.state == RESOLVED:
        known.pop(key, None)
        if before is not None:
            yield _change(RESOLVED_CHANGE, record, now)
        return
    if FIRING_EVENT in change.events:
        yield _change(FIRED, record, now)
    elif record.state == FIRING and record.inhibited_by is not None and (before is None or before.inhibited_by is None):
        yield _change(INHIBITED, record, now)
    elif record.state == FIRING and record.muted is not None and (before is None or before.muted is None):
        yield _change(MUTED, record, now)
    elif before is not None and record.severity != before.severity:
        yield _change(ESCALATED, record, now)  # an SLO burning faster: sent as a repeat unless held back
    else:
        if before is not None:
            known[key] = record
        return
    known[key] = record


def _change(kind: str, record: AlertRecord, now: datetime) -> AlertChange:
    return AlertChange(
        now,
        kind,
        record.rule,
        record.slo,
        record.scope.key,
        getattr(record.scope, "agent", None),
        record.severity,
        record.summary or "",
        record.fired_at,
        record.resolved_at,
        record,
    )


__all__ = ["AlertChange", "replay", "round_times", "select"]
