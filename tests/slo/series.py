"""Replayed series with known bad stretches, and the workbook's formulas computed directly.

`expected_events` is the oracle: for every probe it counts the probes and bad probes in each
window (t - W, t] by brute force over the whole series (no sliding state, nothing shared with
monitor.slo), applies the four pairs' rule, and derives firing, escalation and resolution. The
code under test must agree with it to the sample.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

START_S = 1_767_571_200.0  # 2026-01-05T00:00:00Z
DAY_S = 86400.0
# (severity, factor, long = P / a, short = P / b): DESIGN §12 written out again, not imported.
PAIRS = (("page", 14.4, 720, 8640), ("page", 6.0, 120, 1440), ("ticket", 3.0, 30, 360), ("ticket", 1.0, 10, 120))
RANK = {"ticket": 1, "page": 2}


@dataclass
class Series:
    ts: np.ndarray
    ok: np.ndarray
    ttft_ms: np.ndarray
    agent: list[str]

    def csv(self) -> str:
        lines = ["timestamp,ok,ttft_ms,agent"]
        for t, ok, v, a in zip(self.ts, self.ok, self.ttft_ms, self.agent, strict=True):
            lines.append(f"{t:.0f},{'true' if ok else 'false'},{'' if np.isnan(v) else f'{v:.1f}'},{a}")
        return "\n".join(lines) + "\n"


def series(days: float, *, seed: int, error_rate: float = 0.0, step_s: float = 60.0) -> Series:
    """Clean 1-minute probes: TTFT ~ 400-900 ms, `error_rate` random failures."""
    rng = random.Random(seed)
    n = int(days * DAY_S / step_s)
    ts = START_S + step_s * np.arange(n)
    ok = np.array([rng.random() >= error_rate for _ in range(n)])
    ttft = np.array([rng.uniform(400, 900) for _ in range(n)])
    ttft[~ok] = np.nan
    return Series(ts, ok, ttft, ["local"] * n)


def fail(s: Series, start_h: float, hours: float, share: float = 1.0, seed: int = 1) -> None:
    """Probes in [start, start + hours) fail with probability `share`."""
    rng = random.Random(seed)
    inside = np.flatnonzero((s.ts >= START_S + start_h * 3600) & (s.ts < START_S + (start_h + hours) * 3600))
    for i in inside:
        if rng.random() < share:
            s.ok[i], s.ttft_ms[i] = False, np.nan


def fail_every(s: Series, start_h: float, hours: float, every: int) -> None:
    """Every `every`-th probe of the stretch fails: an exact, evenly spread error rate."""
    inside = np.flatnonzero((s.ts >= START_S + start_h * 3600) & (s.ts < START_S + (start_h + hours) * 3600))
    for i in inside[::every]:
        s.ok[i], s.ttft_ms[i] = False, np.nan


def slow(s: Series, start_h: float, hours: float, ttft_ms: float, share: float = 1.0, seed: int = 2) -> None:
    """Probes in the stretch stay ok but take `ttft_ms` to first token (a latency-only burn)."""
    rng = random.Random(seed)
    inside = np.flatnonzero((s.ts >= START_S + start_h * 3600) & (s.ts < START_S + (start_h + hours) * 3600))
    for i in inside:
        if s.ok[i] and rng.random() < share:
            s.ttft_ms[i] = ttft_ms


def bad_of(s: Series, ttft_below_ms: float | None) -> np.ndarray:
    bad = ~s.ok
    if ttft_below_ms is not None:
        bad = bad | ~(np.nan_to_num(s.ttft_ms, nan=np.inf) < ttft_below_ms)
    return bad


def holding_pair(s: Series, bad: np.ndarray, i: int, period_s: float, objective: float):
    """The first (most severe) pair that holds at probe i, by brute force; None when none does."""
    t = s.ts[i]
    for severity, factor, a, b in PAIRS:
        rates = []
        for length in (period_s / a, period_s / b):
            inside = (s.ts > t - length) & (s.ts <= t)
            total = int(inside.sum())
            rates.append(0.0 if total == 0 else (int(bad[inside].sum()) / total) / (1 - objective))
        if all(r >= factor * (1 - 1e-9) for r in rates):
            return severity, f"{a}:{b}"
    return None


def expected_events(s: Series, bad: np.ndarray, period_s: float, objective: float) -> list[tuple[int, str, str]]:
    """(row, event, severity) for one agent, from the formulas."""
    events, severity = [], None
    for i in range(len(s.ts)):
        held = holding_pair(s, bad, i, period_s, objective)
        if held is None:
            if severity is not None:
                events.append((i, "resolved", severity))
            severity = None
            continue
        if severity is None:
            severity = held[0]
            events.append((i, "firing", severity))
        elif RANK[held[0]] > RANK[severity]:
            severity = held[0]
            events.append((i, "escalated", severity))
    return events
