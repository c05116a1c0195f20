"""SLO burn rates as a source of the alert round (DESIGN §12, §15): the detect step for SLOs.

Each SLO scope keeps a `ScopeBurn` (monitor.slo.burn: count-based windows per agent, the §11 quorum)
in the engine's memory beside the rules' detectors. A round feeds each scope the probes the engine
read for its targets, oldest first, good or bad by the SLO's `good:`; cancelled probes and probes of
agents that reach no provider are skipped, as the detectors skip them. What each scope says goes to
the round as `SloVerdicts`; the stages do the rest, exactly as for a rule.

Probes taken inside one of our maintenance windows over their target (DESIGN §16) are not fed: the
budget leaves those minutes out. The engine hands the round's windows over (`exclude`) before
`rebuild` and `step`; provider windows never count (`ActiveWindow.ours`).

Nothing is checkpointed: a new or restarted leader rebuilds each scope from the raw probes of its
longest window (a tenth of the period), streamed, and the live alerts in the database say what was
already sent, so nothing is paged twice and nothing is lost.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from monitor.alerts.feed import NOT_MEASURED, Point, history
from monitor.alerts.slo_fold import SloVerdicts
from monitor.maintenance.windows import Coverage
from monitor.slo.burn import FIRING, ScopeBurn, Verdict
from monitor.slo.good import is_good
from monitor.slo.scopes import SloScope, members

STREAM_ROWS = 5000  # rows per fetch while a scope is rebuilt from history
BUDGET_EVERY_S = 60.0  # a firing scope's budget is re-read from the rollups at most this often


@dataclass
class _Series:
    definition: object  # the SLO as configured when the series was built; an edit rebuilds it
    scope: SloScope
    targets: tuple[str, ...]
    burn: ScopeBurn
    cursor: datetime | None = None  # the newest probe fed: where the engine reads on from
    # (target, agent) -> its newest probe fed. The engine reads back from the cursor by what a slow probe
    # may lag (engine.WRITE_MARGIN_S); a probe is new when it is newer than its own stream's last.
    seen: dict[tuple[str, str], datetime] = field(default_factory=dict)
    fired_ts: float | None = None
    last: Verdict | None = None

    def is_new(self, p: Point) -> bool:
        last = self.seen.get((p.target, p.agent))
        return last is None or p.started_at > last


class SloBurns:
    def __init__(self) -> None:
        self._series: dict[tuple[str, str], _Series] = {}
        self._budgets: dict[tuple[str, str], tuple[float, float | None]] = {}  # -> (read at, remaining)
        self._targets: dict[str, object] = {}  # id -> the configured target (its labels)
        self.maintenance = Coverage({})  # which targets our maintenance windows cover, and when

    def reach(self, now: datetime) -> datetime:
        """How far back the round needs maintenance windows: the longest SLO period (its budget)."""
        longest = max((s.definition.period_s for s in self._series.values()), default=0.0)
        return now - timedelta(seconds=longest)

    def exclude(self, windows: Sequence) -> None:
        """The maintenance windows (`ActiveWindow`s) of this round: probes inside them are not fed."""
        self.maintenance = Coverage.of(windows, self._targets.values())

    def clear(self) -> None:
        self._series.clear()

    def sync(self, slos: Sequence, targets: Sequence) -> None:
        """Follow the config: a new scope, an edited SLO or a scope whose targets changed starts afresh."""
        by_name = {s.name: s for s in slos}
        self._targets = {t.id: t for t in targets}
        wanted: dict[tuple[str, str], tuple[SloScope, tuple[str, ...]]] = {}
        for slo in slos:
            for key, (scope, ids) in members(slo, targets).items():
                wanted[(slo.name, key)] = (scope, ids)
        for key in list(self._series):
            series = self._series[key]
            if key not in wanted or series.definition != by_name[key[0]] or series.targets != wanted[key][1]:
                del self._series[key]
        for (name, key), (scope, ids) in wanted.items():
            if (name, key) not in self._series:
                slo = by_name[name]
                self._series[(name, key)] = _Series(slo, scope, ids, ScopeBurn(slo.period_s, slo.error_budget))

    def cursors(self) -> dict[str, datetime | None]:
        """Per target, the oldest cursor of the scopes it feeds (None: a scope still to rebuild)."""
        out: dict[str, datetime | None] = {}
        for series in self._series.values():
            for target in series.targets:
                if target not in out or _older(series.cursor, out[target]):
                    out[target] = series.cursor
        return out

    def rebuild(self, conn, now: datetime, until: datetime, unhealthy: Collection[str]) -> set[tuple[str, str]]:
        """Scopes without a cursor replay their longest window of raw samples, notifying nothing."""
        fresh = {k for k, s in self._series.items() if s.cursor is None}
        for key in sorted(fresh):
            series = self._series[key]
            since = now - timedelta(seconds=max(w.long_s for w in series.burn.windows))
            rows = conn.execution_options(stream_results=True, yield_per=STREAM_ROWS).execute(
                history(series.targets, since, until)
            )
            for row in rows:
                self._feed(series, Point(*row), unhealthy, self.maintenance)
            series.cursor = max(series.cursor or until, until)
        return fresh

    def step(
        self, points: Mapping[str, Sequence[Point]], unhealthy: Collection[str], fresh: Collection[tuple[str, str]]
    ) -> tuple[dict[tuple[str, str], SloVerdicts], int]:
        """Feed each scope its new probes: ((slo, scope key) -> its verdicts, probes judged)."""
        out: dict[tuple[str, str], SloVerdicts] = {}
        fed = 0
        for key, series in self._series.items():
            merged = sorted(
                (p for t in series.targets for p in points.get(t, ()) if series.is_new(p)),
                key=lambda p: (p.started_at, p.id),
            )
            events = []
            for p in merged:
                verdict = self._feed(series, p, unhealthy, self.maintenance)
                fed += verdict is not None
                if verdict is not None and verdict.event is not None:
                    events.append(verdict)
            out[key] = SloVerdicts(
                series.definition,
                series.scope,
                series.targets,
                tuple(events),
                series.burn.severity,
                series.last,
                series.fired_ts,
                key in fresh,
            )
        return out, fed

    def budgets_due(self, verdicts: Mapping[tuple[str, str], SloVerdicts], now: datetime) -> list[tuple[str, str]]:
        """Firing scopes whose budget was not read in the last minute (a rollup query each)."""
        due = []
        for key, v in verdicts.items():
            cached = self._budgets.get(key)
            if v.severity is not None and (cached is None or now.timestamp() - cached[0] >= BUDGET_EVERY_S):
                due.append(key)
        return due

    def remember_budget(self, key: tuple[str, str], now: datetime, remaining: float | None) -> None:
        self._budgets[key] = (now.timestamp(), remaining)

    def budget(self, key: tuple[str, str]) -> float | None:
        cached = self._budgets.get(key)
        return None if cached is None else cached[1]

    @staticmethod
    def _feed(series: _Series, p: Point, unhealthy: Collection[str], maintenance: Coverage) -> Verdict | None:
        series.cursor = p.started_at if series.cursor is None else max(series.cursor, p.started_at)
        series.seen[(p.target, p.agent)] = p.started_at
        if p.agent in unhealthy or p.error_kind == NOT_MEASURED:
            return None  # that vantage point reaches no provider / the probe was cut short by a stop
        if maintenance.covers(p.target, p.started_at):
            return None  # planned work: not in the budget
        values = {"ttft_ms": p.ttft_ms, "ttft_answer_ms": p.ttft_answer_ms, "total_ms": p.total_ms, "tps": p.tps}
        good = is_good(series.definition.good, p.ok, p.error_kind, values)
        # A probe written late (slow, or a timeout) may be older than its agent's newest on another target
        # of the scope: it counts at that newest time, as a burn's windows take an agent's probes in order.
        at_s = max(p.started_at.timestamp(), series.burn.last_ts(p.agent) or 0.0)
        verdict = series.burn.observe(p.agent, at_s, not good)
        if verdict.event == FIRING:
            series.fired_ts = verdict.timestamp_s
        if verdict.window is not None:
            series.last = verdict
        return verdict


def _older(a: datetime | None, b: datetime | None) -> bool:
    if a is None:
        return b is not None
    return b is not None and a < b
