"""One SLO scope's burn-rate alert across its vantage points (DESIGN §12, §11), pure.

Each agent's probes of the scope feed its own count-based windows, and after each of its probes it
judges every window pair (long and short burn at or above the factor). The scope is then judged at
that probe's time: a pair holds for the scope when it trips, as of each agent's own last probe, on
a quorum of the agents that probed the scope within the pair's long window. The alert fires when
any pair holds, takes the severity of the most severe pair that holds and never steps down while it
fires (so the page that opened an incident also closes it), and resolves when no pair holds.

The same object runs the live alerts (`monitor.alerts.slo_source`) and `firsttoken backtest --slo`,
so a backtest shows exactly what the service would have paged.
"""

from __future__ import annotations

from dataclasses import dataclass

from monitor.config.vantage import required_agents
from monitor.slo.counts import WindowCounts
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
        # Per agent, as of its own last probe: (long burn, short burn, trips) per pair. An agent's view
        # changes only when it probes, so agents probing a second apart never take turns at the quorum.
        self.views: dict[str, tuple[tuple[float, float, bool], ...]] = {}
        self.severity: str | None = None  # of the live alert; None while it does not fire

    def last_ts(self, agent: str) -> float | None:
        """When `agent`'s newest probe counted here started (None: none yet)."""
        counts = self.agents.get(agent)
        return None if counts is None else counts.last_ts

    def observe(self, agent: str, ts: float, bad: bool) -> Verdict:
        counts = self.agents.get(agent)
        if counts is None:
            counts = self.agents[agent] = WindowCounts(self.lengths_s)
        counts.add(ts, bad)
        view = []
        for window in self.windows:
            long_burn, short_burn = self._burn(counts, window.long_s), self._burn(counts, window.short_s)
            view.append((long_burn, short_burn, window.trips(long_burn, short_burn)))
        self.views[agent] = tuple(view)
        return self.judge(ts)

    def _burn(self, counts: WindowCounts, length_s: float) -> float:
        bad, total = counts.counts(length_s)
        return burn_rate(bad, total, self.error_budget)

    def judge(self, ts: float) -> Verdict:
        """The scope at `ts`: voters for a pair are the agents that probed within its long window."""
        chosen = None
        for i, window in enumerate(self.windows):  # fastest first; the first that holds is the most severe
            voters = [a for a, c in self.agents.items() if c.last_ts is not None and c.last_ts > ts - window.long_s]
            holders = [a for a in voters if self.views[a][i][2]]
            if voters and len(holders) >= required_agents(None, len(voters)):  # DESIGN §11's default
                chosen = (i, window, holders)
                break
        if chosen is None:
            event = RESOLVED if self.severity is not None else None
            self.severity = None
            return Verdict(ts, None, None, None, (), event, None)
        i, window, holders = chosen
        top = max(holders, key=lambda a: (self.views[a][i][0], a))
        before = self.severity
        self.severity = higher(before, window.severity)
        if before is None:
            event = FIRING
        elif SEVERITY_RANK[self.severity] > SEVERITY_RANK[before]:
            event = ESCALATED
        else:
            event = None
        long_burn, short_burn, _ = self.views[top][i]
        return Verdict(ts, window, long_burn, short_burn, tuple(sorted(holders)), event, self.severity)
