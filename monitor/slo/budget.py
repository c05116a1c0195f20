"""Attainment and error budget over an SLO's period (DESIGN §12), from counts of probes.

error budget      = (1 - objective) x probes in the whole period
budget remaining  = 1 - bad / error budget            (negative once spent)
attainment        = good / probes
exhausts in       = remaining x period / burn rate    (burn rate 1 spends a whole budget in a period)

The budget belongs to the whole period, however little of it the data covers. When the probes seen
span only part of the period (a new SLO, a new target, a short backtest), the probes the whole period
holds are estimated from what was seen: the probes seen, at the pace they were seen, over the whole
period (`period_probes`); never fewer than were seen. So a young scope's remaining budget is what
its bad probes have spent of the period's budget (one failure among a day's 288 probes of a 30-day,
99.9% SLO spends 12% of it, not 350%), and it never falls below what the plain formula over the
probes seen allows.
"""

from __future__ import annotations

from dataclasses import dataclass


def period_probes(probes: int, observed_s: float, period_s: float) -> float:
    """The probes a whole period holds, from `probes` seen over `observed_s` of it: as seen when they
    span the period (or no time at all: one probe tells no pace), else that pace over the period."""
    if probes <= 0 or observed_s <= 0 or observed_s >= period_s:
        return float(probes)
    return probes * period_s / observed_s


@dataclass(frozen=True, slots=True)
class Budget:
    probes: int
    good: int
    objective: float
    # The probes the whole period holds (`period_probes`); None: the probes seen (they span it).
    expected_probes: float | None = None

    @property
    def bad(self) -> int:
        return self.probes - self.good

    @property
    def attainment(self) -> float | None:
        return self.good / self.probes if self.probes else None

    @property
    def period_probes(self) -> float:
        """The probes the whole period holds: never under the probes seen, whatever the estimate."""
        return max(float(self.probes), self.expected_probes or 0.0)

    @property
    def allowed_bad(self) -> float:
        """The period's error budget in probes."""
        return (1 - self.objective) * self.period_probes

    @property
    def remaining(self) -> float | None:
        """1 untouched, 0 spent, negative overspent; None before the first probe."""
        return self.remaining_after(self.bad) if self.probes else None

    def remaining_after(self, bad_so_far):
        """The remaining budget after `bad_so_far` bad probes (a number or a numpy array: the
        burn-down's cumulative bad probes per day): against the one budget of the whole period, so
        the line starts at or below 100% and only falls, ending at `remaining`."""
        return 1 - bad_so_far / self.allowed_bad

    def exhausts_in_s(self, burn_rate: float, period_s: float) -> float | None:
        """Seconds until the budget is spent at `burn_rate`; 0 when already spent, None when it never is."""
        remaining = self.remaining
        if remaining is None:
            return None
        if remaining <= 0:
            return 0.0
        if burn_rate <= 0:
            return None
        return remaining * period_s / burn_rate
