"""Attainment and error budget over an SLO's period (DESIGN §12), from counts of probes.

error budget      = (1 - objective) x probes in the period
budget remaining  = 1 - bad / error budget            (negative once spent)
attainment        = good / probes
exhausts in       = remaining x period / burn rate    (burn rate 1 spends a whole budget in a period)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Budget:
    probes: int
    good: int
    objective: float

    @property
    def bad(self) -> int:
        return self.probes - self.good

    @property
    def attainment(self) -> float | None:
        return self.good / self.probes if self.probes else None

    @property
    def allowed_bad(self) -> float:
        return (1 - self.objective) * self.probes

    @property
    def remaining(self) -> float | None:
        """1 untouched, 0 spent, negative overspent; None before the first probe."""
        return 1 - self.bad / self.allowed_bad if self.probes else None

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
