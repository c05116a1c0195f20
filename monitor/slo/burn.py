"""One SLO scope's burn-rate alert across its vantage points (DESIGN §12, §11), pure.

Each agent's probes of the scope feed its own count-based windows. After every probe the scope is
judged at that probe's time: a window pair holds for the scope when it trips on a quorum of the
agents that probed the scope within the pair's long window. The alert fires when any pair holds,
takes the severity of the most severe pair that holds and never steps down while it fires (so the
page that opened an incident also closes it), and resolves when no pair holds.

The same object runs the live alerts (`monitor.slo.evaluator`) and `firsttoken backtest --slo`,
so a backtest shows exactly what the service would have paged.
"""

from __future__ import annotations

from dataclasses import dataclass

from monitor.slo.counts import WindowCounts
from monitor.slo.quorum import quorum_holds
from monitor.slo.windows import SEVERITY_RANK, BurnWindow, burn_rate, burn_windows, higher, window_lengths

FIRING, ESCALATED, RESOLVED = "firing", "escalated", "resolved"


@dataclass(frozen=True, slots=True)
class Verdict:
    """The scope judged at one probe: the fastest pair that holds (None: none) and what changed."""

    timestamp_s: float
    window: BurnWindow | None  # the most severe, fastest pair that holds
    burn_rate: float | None  # its long window's burn rate (the highest among the agents that trip it)
    short_burn_rate: float | None
    agents: tuple[str, ...]  # the agents on which that pair trips
    event: str | None = None  # firing | escalated | resolved
    severity: str | None = None  # the alert's severity after this probe (None: not firing)


class ScopeBurn:
    def __init__(self, period_s: float, error_budget: float) -> None:
        self.windows = burn_windows(period_s)
        self.lengths_s = window_lengths(period_s)
        self.error_budget = error_budget
        self.agents: dict[str, WindowCounts] = {}
        self.severity: str | None = None  # of the live alert; None while it does not fire

    def observe(self, agent: str, ts: float, bad: bool) -> Verdict:
        counts = self.agents.get(agent)
        if counts is None:
            counts = self.agents[agent] = WindowCounts(self.lengths_s)
        counts.add(ts, bad)
        return self.judge(ts)

    def burn(self, agent: str, length_s: float) -> float:
        bad, total = self.agents[agent].counts(length_s)
        return burn_rate(bad, total, self.error_budget)

    def judge(self, ts: float) -> Verdict:
        for counts in self.agents.values():
            counts.advance(ts)
        chosen = None
        for window in self.windows:  # fastest first; the first that holds is the most severe
            voters, holders = 0, []
            for agent, counts in self.agents.items():
                if counts.counts(window.long_s)[1] == 0:
                    continue  # did not probe the scope within this window: no vote
                voters += 1
                if window.trips(self.burn(agent, window.long_s), self.burn(agent, window.short_s)):
                    holders.append(agent)
            if quorum_holds(len(holders), voters):
                chosen = (window, holders)
                break
        if chosen is None:
            event = RESOLVED if self.severity is not None else None
            self.severity = None
            return Verdict(ts, None, None, None, (), event, None)
        window, holders = chosen
        top = max(holders, key=lambda a: (self.burn(a, window.long_s), a))
        before = self.severity
        self.severity = higher(before, window.severity)
        if before is None:
            event = FIRING
        elif SEVERITY_RANK[self.severity] > SEVERITY_RANK[before]:
            event = ESCALATED
        else:
            event = None
        return Verdict(
            ts,
            window,
            self.burn(top, window.long_s),
            self.burn(top, window.short_s),
            tuple(sorted(holders)),
            event,
            self.severity,
        )
