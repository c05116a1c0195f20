"""`firsttoken backtest --csv` with an `agent` column (DESIGN §11, §15): the series replayed through the
alert engine itself, as one target probed from each agent in the file.

The rows become samples of one target (`csv/series@csv:csv`, probed at the file's own median gap), the
rules apply to it whatever their `match:` says, and `monitor.alerts.replay` runs the engine over them:
quorum, probing window, own path, the agent-wide fold, holds and resolutions are the live service's.
Each alert the engine would have announced becomes an `Alarm` row of the table `backtest --csv` prints.
A file without an agent column is one series and replays through the detector alone (backtest.py).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from monitor.alerts.backtest import Alarm, Point, iso
from monitor.alerts.replay import RESOLVED_CHANGE, replay
from monitor.alerts.scope import TARGET
from monitor.sample import Sample

PROVIDER, MODEL, REGION, PROMPT = "csv", "series", "csv", "csv"
TARGET_ID = f"{PROVIDER}/{MODEL}@{REGION}:{PROMPT}"
NEW_NORMAL = "accepted as the new normal"  # fold.py's reason when a lasting shift became the baseline


def replay_agents(points: Sequence[Point], rules: Sequence, metric: str, names: dict[str, str] | None = None):
    """Every alarm the engine would have announced, in row order. `rules`: config alert rules;
    `names`: a rule's name as the table shows it (the built-in default's)."""
    config = _config(rules, _gap_s(points))
    samples = [_sample(p, metric) for p in points]
    times = [(p.timestamp_s, p.agent or "local") for p in points]
    alarms: dict[tuple[str, str], Alarm] = {}
    done: list[Alarm] = []
    for change in replay(samples, config):
        key = (change.rule, change.scope)
        record = change.record
        if change.change == RESOLVED_CHANGE:
            opened = alarms.pop(key, None)
            if opened is not None:
                at = record.resolved_at.timestamp()
                reason = record.facts.reason if record.facts else ""
                done.append(
                    replace(
                        opened,
                        resolved_index=_row(times, at, opened.agents),
                        resolved_timestamp=iso(at),
                        new_normal=reason == NEW_NORMAL,
                    )
                )
            continue
        if key in alarms:
            continue
        at = (record.fired_at or record.started_at).timestamp()
        alarms[key] = Alarm(
            _row(times, at, record.agents),
            iso(at),
            (names or {}).get(record.rule, record.rule),
            record.metric,
            record.fired_value if record.fired_value is not None else record.value,
            record.baseline,
            scope="target" if record.scope.kind == TARGET else "vantage",
            agent=record.scope.agent,
            agents=record.agents,
            agents_clear=record.agents_clear,
            attribution=record.attribution,
        )
    return sorted([*done, *alarms.values()], key=lambda a: (a.index, a.rule))


def _row(times: Sequence[tuple[float, str]], at: float, agents: Sequence[str]) -> int:
    """The data row the engine judged at `at`: the first at or after it from one of the alert's agents
    (agents probing at the same instant interleave), else from any."""
    first = None
    for i, (t, agent) in enumerate(times):
        if t >= at - 1e-6:
            if not agents or agent in agents:
                return i
            first = i if first is None else first
    return first if first is not None else len(times) - 1


def _gap_s(points: Sequence[Point]) -> float:
    """Each agent's median gap between its rows: the interval the target is probed at."""
    last: dict[str, float] = {}
    gaps = []
    for p in points:
        if p.agent in last and p.timestamp_s > last[p.agent]:
            gaps.append(p.timestamp_s - last[p.agent])
        last[p.agent] = p.timestamp_s
    return max(1.0, round(statistics.median(gaps))) if gaps else 60.0


def _config(rules: Sequence, interval_s: float):
    from monitor.config import load_config_text

    spec = {
        "database": "sqlite:///unused.db",
        "prompts": {PROMPT: {"messages": [{"role": "user", "content": "replay"}], "max_tokens": 1}},
        "providers": {
            PROVIDER: {"protocol": "openai-chat", "regions": {REGION: "http://127.0.0.1:9/v1"}, "models": [MODEL]}
        },
        "checks": [{"providers": [PROVIDER], "prompts": [PROMPT], "interval": f"{interval_s:g}s"}],
    }
    config = load_config_text(json.dumps(spec), base_dir=Path("."))
    return replace(config, alerts=tuple(replace(r, match={}) for r in rules), inhibit=())


def _sample(p: Point, metric: str) -> Sample:
    ok = p.value is not None
    values = {}
    if metric != "error_rate" and ok:
        values[metric] = p.value
    timing = {"processing_ms": p.processing_ms} if p.processing_ms is not None else None
    return Sample(
        target=TARGET_ID,
        provider=PROVIDER,
        model=MODEL,
        region=REGION,
        prompt=PROMPT,
        started_at=datetime.fromtimestamp(p.timestamp_s, UTC),
        ok=ok,
        error_kind=None if ok else "server_error",
        ttfb_ms=p.ttfb_ms,
        server_timing=timing,
        agent=p.agent or "local",
        id=f"row-{p.line}",
        **values,
    )
