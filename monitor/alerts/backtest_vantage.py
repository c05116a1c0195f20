"""`firsttoken backtest` with an `agent` column (DESIGN §11): per vantage point, with the quorum.

Rows from several agents are replayed in file order, each into its own
agent's detector; `vantage.TargetFold` turns every evaluation into the
target's (by the quorum) and the agent's own, exactly as the live engine
does. An agent counts as probing while its last row is within the rule's
window (or three of its own sampling gaps) of the row being replayed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from monitor.alerts.attribution import LATENCY_RULE_METRICS, PathHistory, combine, split_sample
from monitor.alerts.backtest import Alarm, Point, iso, replay
from monitor.alerts.detectors.base import OK
from monitor.alerts.detectors.detect import DetectorSettings, SeriesDetector
from monitor.alerts.vantage import TargetFold

PROBING_GAPS = 3


def replay_points(
    points: Sequence[Point], rules: Sequence[tuple[str, DetectorSettings]], confirms: Mapping[str, Any] | None = None
) -> list[Alarm]:
    """Every alarm of every rule, in row order: per vantage point with the quorum when the rows come from
    several agents (`confirms`: rule name -> its `confirm:`, default majority), else as one series."""
    if len({p.agent for p in points}) <= 1:
        return replay(points, rules)
    alarms: list[Alarm] = []
    for name, settings in rules:
        alarms.extend(replay_vantage(points, name, settings, (confirms or {}).get(name)))
    alarms.sort(key=lambda a: a.index)
    return alarms


def replay_vantage(points: Sequence[Point], name: str, settings: DetectorSettings, confirm) -> Iterator[Alarm]:
    detectors: dict[str, SeriesDetector] = {}
    paths: dict[str, PathHistory] = {}
    last_seen: dict[str, float] = {}
    gap: dict[str, float] = {}
    target_open: Alarm | None = None
    target_started: float | None = None
    vantage_open: dict[str, Alarm] = {}
    firing = False
    attributing = settings.metric in LATENCY_RULE_METRICS
    for index, point in enumerate(points):
        agent, ts = point.agent, point.timestamp_s
        if agent in last_seen:
            gap[agent] = ts - last_seen[agent]
        last_seen[agent] = ts
        probing = frozenset(
            a for a, seen in last_seen.items() if ts - seen <= max(settings.window_s, PROBING_GAPS * gap.get(a, 0.0))
        )
        det = detectors.setdefault(agent, SeriesDetector(settings))
        fold = TargetFold(probing, confirm, firing)
        for other, d in detectors.items():
            fold.seed(other, d.state)
        ev = det.observe(ts, point.value)
        if attributing and point.value is not None:
            paths.setdefault(agent, PathHistory()).add(
                ts, split_sample(point.value, point.ttfb_ms, point.processing_ms)
            )
        fold.add(agent, ev)
        verdict = fold.final()
        target_ev = fold.target[-1] if fold.target else None
        if target_ev is None:
            continue
        if target_ev.state != OK and target_started is None:
            target_started = ts
        if target_ev.state == "firing" and not firing:
            target_open = Alarm(
                index, iso(ts), name, settings.metric, target_ev.value, target_ev.baseline,
                agents=verdict.agents, agents_clear=verdict.agents_clear,
                attribution=_attribution(paths, verdict.agents, target_started) if attributing else None,
            )  # fmt: skip
        elif target_ev.state == OK and firing and target_open is not None:
            yield _resolved(target_open, index, ts, target_ev.new_normal)
            target_open = None
        if target_ev.state == OK:
            target_started = None
        firing = target_ev.state == "firing"
        own = fold.vantage.get(agent, [])[-1:] or []
        for vev in own:
            if vev.alarm_started and agent not in vantage_open:
                vantage_open[agent] = Alarm(
                    index, iso(ts), name, settings.metric, vev.value, vev.baseline, scope="vantage", agent=agent,
                    agents=(agent,), agents_clear=verdict.agents_clear,
                    attribution=_attribution(paths, (agent,), ts - _onset_s(settings, gap.get(agent)))
                    if attributing else None,
                )  # fmt: skip
            elif vev.state == OK and agent in vantage_open:
                yield _resolved(vantage_open.pop(agent), index, ts, vev.new_normal)
    if target_open is not None:
        yield target_open
    yield from vantage_open.values()


def _onset_s(settings: DetectorSettings, gap_s: float | None) -> float:
    """How long before an alarm its change began: the evaluations it took to fire, in samples."""
    return (settings.for_evaluations + 2) * (gap_s or 60.0)


def _attribution(paths: dict[str, PathHistory], agents: Sequence[str], since_s: float | None) -> dict | None:
    if since_s is None:
        return None
    return combine(paths[a].attribute(since_s) for a in agents if a in paths)


def _resolved(alarm: Alarm, index: int, ts: float, new_normal: bool) -> Alarm:
    return Alarm(
        **{**alarm.to_dict(), "resolved_index": index, "resolved_timestamp": iso(ts), "new_normal": new_normal}
    )
