"""`firsttoken backtest --slo`: replay a series of probes through an SLO's burn-rate alert, exactly as
the service would judge them (the same `ScopeBurn`), and total its budget.

CSV: a header, then one row per probe, oldest first: `timestamp` (or `started_at`; ISO 8601 or epoch
seconds), `ok` (true/false, 1/0, yes/no), and the measured values the SLO bounds (`ttft_ms`, and if
it bounds them `ttft_answer_ms`, `total_ms`, `tps`; empty when not measured), optionally `agent`
(the vantage point; default one agent) and `error_kind` (`assertion` matters with `checks: false`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from monitor.alerts.backtest import BacktestError, iso, parse_number, parse_timestamp
from monitor.csvfile import read_rows
from monitor.slo.budget import Budget, period_probes
from monitor.slo.burn import ScopeBurn
from monitor.slo.good import is_good

VALUE_COLUMNS = ("ttft_ms", "ttft_answer_ms", "total_ms", "tps")
_TRUE, _FALSE = ("true", "1", "yes", "ok", "t", "y"), ("false", "0", "no", "f", "n")


@dataclass(frozen=True, slots=True)
class Probe:
    line: int
    timestamp_s: float
    ok: bool
    agent: str
    values: dict[str, float | None]
    error_kind: str | None = None


@dataclass(frozen=True, slots=True)
class SloEvent:
    index: int  # 0-based data row
    timestamp: str
    event: str  # firing | escalated | resolved
    severity: str | None  # the alert's severity after the event (resolved: the one it had)
    window: str | None  # the pair that holds (`1h/5m`); resolved: None
    burn_rate: float | None  # its long window's burn rate
    short_burn_rate: float | None
    agents: tuple[str, ...]

    def to_dict(self) -> dict:
        return {
            "index": self.index,
            "timestamp": self.timestamp,
            "event": self.event,
            "severity": self.severity,
            "window": self.window,
            "burn_rate": None if self.burn_rate is None else round(self.burn_rate, 6),
            "short_burn_rate": None if self.short_burn_rate is None else round(self.short_burn_rate, 6),
            "agents": list(self.agents),
        }


@dataclass(frozen=True, slots=True)
class Replay:
    events: tuple[SloEvent, ...]
    budget: Budget
    firing_at_end: str | None  # the severity still firing after the last row


def read_probes(rows: Iterable[Sequence[str]], source: str = "csv") -> list[Probe]:
    it = iter(rows)
    header = next(it, None)
    if header is None:
        raise BacktestError(f"{source}: empty file (expected a header: timestamp,ok,ttft_ms)")
    names = [h.strip().lower() for h in header]
    ts_col = next((names.index(c) for c in ("timestamp", "started_at") if c in names), None)
    if ts_col is None or "ok" not in names:
        raise BacktestError(f"{source}:1: no {'timestamp' if ts_col is None else 'ok'} column in the header")
    ok_col = names.index("ok")
    agent_col = names.index("agent") if "agent" in names else None
    kind_col = names.index("error_kind") if "error_kind" in names else None
    value_cols = {m: names.index(m) for m in VALUE_COLUMNS if m in names}
    probes: list[Probe] = []
    for line, row in enumerate(it, start=2):
        if not row or all(not cell.strip() for cell in row):
            continue
        where = f"{source}:{line}"
        if len(row) < len(header):
            raise BacktestError(f"{where}: {len(row)} columns, the header has {len(header)}")
        ts = parse_timestamp(row[ts_col], where)
        if probes and ts < probes[-1].timestamp_s:
            raise BacktestError(f"{where}: timestamp goes back in time (rows must be oldest first)")
        values = {m: parse_number(row[c], where, m) for m, c in value_cols.items()}
        agent = (row[agent_col].strip() if agent_col is not None else "") or "local"
        kind = row[kind_col].strip() or None if kind_col is not None else None
        probes.append(Probe(line, ts, _bool(row[ok_col], where), agent, values, kind))
    return probes


def _bool(text: str, where: str) -> bool:
    value = text.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise BacktestError(f"{where}: bad ok {text!r} (expected true or false)")


def missing_columns(slo, probes_header: Sequence[str]) -> list[str]:
    names = {h.strip().lower() for h in probes_header}
    return [m for m, _below, _above in slo.good.bounds() if m not in names]


def replay(slo, probes: Sequence[Probe]) -> Replay:
    burn = ScopeBurn(slo.period_s, slo.error_budget)
    events: list[SloEvent] = []
    good = 0
    for index, probe in enumerate(probes):
        ok = is_good(slo.good, probe.ok, probe.error_kind, probe.values)
        good += ok
        before = burn.severity
        verdict = burn.observe(probe.agent, probe.timestamp_s, not ok)
        if verdict.event is None:
            continue
        window = verdict.window.name if verdict.window is not None else None
        severity = verdict.severity if verdict.severity is not None else before
        events.append(
            SloEvent(
                index,
                iso(probe.timestamp_s),
                verdict.event,
                severity,
                window,
                verdict.burn_rate,
                verdict.short_burn_rate,
                verdict.agents,
            )
        )
    # The period's budget: a series shorter than the period is taken at its own pace over the whole period.
    span_s = probes[-1].timestamp_s - probes[0].timestamp_s if probes else 0.0
    expected = period_probes(len(probes), span_s, slo.period_s)
    return Replay(tuple(events), Budget(len(probes), good, slo.objective, expected), burn.severity)


def read_csv(path: str) -> tuple[list[str], list[Probe]]:
    rows = read_rows(path, BacktestError)
    return (rows[0] if rows else []), read_probes(rows, path)
