"""Replay a CSV series through the detector, exactly as the live service would.

CSV: a header row, then one row per probe. Columns:
- `timestamp` (or `started_at`, as `firsttoken samples --csv` writes it):
  ISO 8601 (no zone means UTC) or Unix epoch seconds (numbers above 1e11
  are taken as milliseconds);
- `value` (or, without a `value` column, the column named after the metric,
  e.g. `ttft_ms`): a number; empty or negative is a failed probe;
- `agent` (optional): the vantage point that took the sample. With more than
  one agent each gets its own detector and the quorum decides (DESIGN §11,
  replay_series.py: the alert engine itself): an alarm is the target's (`scope: target`, every
  agent where it holds in `agents`) or one agent's (`scope: vantage`);
- `ttfb_ms` (and `processing_ms`, optional): with them a latency alarm says
  whether the network path or the provider moved (`attribution`);
- anything else is ignored, except `target`: a file with more than one
  target is refused (filter it with `firsttoken samples --target`).
Rows must be in time order. A bad row is a `BacktestError` naming its line.

Each rule gets its own `SeriesDetector`, fed one row at a time. An `Alarm`
is recorded when an alert starts firing; `resolved_index` is the row that
resolved it (None while it still fires at the end of the file), and
`new_normal` says it was resolved by accepting the shifted level as the
baseline rather than by recovering. A `ShortRun` is a shift that had the
evidence to page but ended before it had held the rule's `min_duration`:
never a page, listed so the rule's duration can be judged on its own history.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

from monitor.alerts.detectors.detect import DetectorSettings, SeriesDetector
from monitor.csvfile import read_rows

TIMESTAMP_COLUMNS = ("timestamp", "started_at")
EPOCH_MS_ABOVE = 1e11  # 1e11 s is the year 5138; 1e11 ms is 1973


class BacktestError(ValueError):
    """A CSV problem, one line, with the file line it is on."""


@dataclass(frozen=True)
class Point:
    line: int  # line in the file, 1 = the header
    timestamp_s: float
    value: float | None  # None: a failed probe
    agent: str = ""  # the vantage point; "" when the file has no agent column
    ttfb_ms: float | None = None
    processing_ms: float | None = None


@dataclass(frozen=True)
class Alarm:
    index: int  # 0-based data row
    timestamp: str  # ISO 8601 UTC
    rule: str
    metric: str
    value: float | None
    baseline: float | None
    resolved_index: int | None = None
    resolved_timestamp: str | None = None
    new_normal: bool = False
    scope: str = "target"  # target | vantage (below the quorum: `agent` saw it, the others did not)
    agent: str | None = None
    agents: tuple[str, ...] = ()
    agents_clear: tuple[str, ...] = ()
    attribution: dict | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def read_points(rows: Iterable[Sequence[str]], metric: str, source: str = "csv") -> list[Point]:
    """Parse CSV rows (the header first) into points; BacktestError on the first bad row."""
    it = iter(rows)
    header = next(it, None)
    if header is None:
        raise BacktestError(f"{source}: empty file (expected a header: timestamp,value)")
    names = [h.strip().lower() for h in header]
    ts_col = next((names.index(c) for c in TIMESTAMP_COLUMNS if c in names), None)
    value_name = "value" if "value" in names else metric if metric in names else None
    if ts_col is None or value_name is None:
        missing = "timestamp" if ts_col is None else f"value (or {metric})"
        raise BacktestError(f"{source}:1: no {missing} column in the header")
    value_col = names.index(value_name)
    target_col = names.index("target") if "target" in names else None
    agent_col = names.index("agent") if "agent" in names else None
    ttfb_col = names.index("ttfb_ms") if "ttfb_ms" in names and value_name != "ttfb_ms" else None
    processing_col = names.index("processing_ms") if "processing_ms" in names else None
    points: list[Point] = []
    target = None
    for line, row in enumerate(it, start=2):
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) <= max(ts_col, value_col):
            raise BacktestError(f"{source}:{line}: {len(row)} columns, the header has {len(header)}")
        ts = parse_timestamp(row[ts_col], f"{source}:{line}")
        if points and ts < points[-1].timestamp_s:
            raise BacktestError(f"{source}:{line}: timestamp goes back in time (rows must be oldest first)")
        if target_col is not None and target_col < len(row):
            if target is None:
                target = row[target_col]
            elif row[target_col] != target:
                raise BacktestError(
                    f"{source}:{line}: a second target ({row[target_col]!r} after {target!r}); "
                    "replay one target at a time (firsttoken samples --target ID --csv)"
                )
        where = f"{source}:{line}"
        agent = row[agent_col].strip() if agent_col is not None and agent_col < len(row) else ""
        points.append(
            Point(
                line,
                ts,
                _value(row[value_col], where),
                agent,
                _optional(row, ttfb_col, where),
                _optional(row, processing_col, where),
            )
        )
    return points


def parse_timestamp(text: str, where: str) -> float:
    text = text.strip()
    try:
        number = float(text)
    except ValueError:
        number = None
    if number is not None:
        if not math.isfinite(number) or number < 0:
            raise BacktestError(f"{where}: bad timestamp {text!r}")
        return number / 1000.0 if number > EPOCH_MS_ABOVE else number
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith(("Z", "z")) else text)
    except ValueError:
        raise BacktestError(f"{where}: bad timestamp {text!r} (expected ISO 8601 or epoch seconds)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def parse_number(text: str, where: str, column: str = "value", hint: str = "a number, or empty when not measured"):
    """A finite number, or None for an empty cell; a one-line error naming the row and column otherwise."""
    text = text.strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise BacktestError(f"{where}: bad {column} {text!r} ({hint})") from None
    if not math.isfinite(value):
        raise BacktestError(f"{where}: bad {column} {text!r}")
    return value


def _value(text: str, where: str) -> float | None:
    value = parse_number(text, where, hint="a number; empty or negative for a failed probe")
    return None if value is None or value < 0 else value


def _optional(row: Sequence[str], col: int | None, where: str) -> float | None:
    return None if col is None or col >= len(row) else _value(row[col], where)


def replay(points: Sequence[Point], rules: Sequence[tuple[str, DetectorSettings]]) -> list[Alarm]:
    """Every alarm of every rule, in row order (then rule order), all rows as one series
    (a file with several agents replays through the engine instead: replay_series.py)."""
    alarms: list[Alarm] = []
    for name, settings in rules:
        alarms.extend(_replay_one(points, name, settings))
    alarms.sort(key=lambda a: a.index)
    return alarms


def _replay_one(points: Sequence[Point], name: str, settings: DetectorSettings) -> Iterator[Alarm]:
    det = SeriesDetector(settings)
    open_alarm: Alarm | None = None
    for index, point in enumerate(points):
        ev = det.observe(point.timestamp_s, point.value)
        if ev.resolved and open_alarm is not None:
            yield Alarm(
                **{
                    **open_alarm.to_dict(),
                    "resolved_index": index,
                    "resolved_timestamp": iso(point.timestamp_s),
                    "new_normal": ev.new_normal,
                }
            )
            open_alarm = None
        if ev.alarm_started:
            open_alarm = Alarm(index, iso(point.timestamp_s), name, settings.metric, ev.value, ev.baseline)
    if open_alarm is not None:
        yield open_alarm


@dataclass(frozen=True)
class ShortRun:
    index: int  # the row that ended it
    timestamp: str
    rule: str
    held_s: float  # how long it had held at its last raising row


def short_runs(points: Sequence[Point], rules: Sequence[tuple[str, DetectorSettings]]) -> list[ShortRun]:
    """Every run of every rule that ended too short to page (see `min_duration`), in row order."""
    out: list[ShortRun] = []
    for name, settings in rules:
        det = SeriesDetector(settings)
        for index, point in enumerate(points):
            held = det.observe(point.timestamp_s, point.value).short_run_s
            if held is not None:
                out.append(ShortRun(index, iso(point.timestamp_s), name, held))
    out.sort(key=lambda r: r.index)
    return out


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z")


def read_csv(path: str, metric: str) -> list[Point]:
    return read_points(read_rows(path, BacktestError), metric, path)
