"""Where each SLO scope stands (DESIGN §12): what `firsttoken slo` prints and the SLOs page shows."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from monitor.slo.budget import Budget, period_probes
from monitor.slo.windows import burn_rate, burn_windows
from monitor.units import format_duration

# The burn rate `exhausts_at` projects with: the slow ticket's short window (P/120, 6 h for 30 d) is
# recent enough to follow a change and long enough not to swing with one bad probe.
EXHAUSTION_WINDOW = 120


@dataclass(frozen=True)
class ScopeStatus:
    slo: str
    scope: dict  # provider, model, region, prompt (null where wider) and `per`
    scope_key: str
    objective: float
    period_s: float
    budget: Budget
    burn_rates: dict[str, float | None] = field(default_factory=dict)  # window (`1h`) -> burn rate
    exhausts_at: datetime | None = None
    exhausted: bool = False

    def to_dict(self) -> dict:
        return {
            "slo": self.slo,
            "scope": self.scope,
            "objective": self.objective,
            "period": format_duration(self.period_s),
            "probes": self.budget.probes,
            "good": self.budget.good,
            "attainment": _round(self.budget.attainment),
            "budget_remaining": _round(self.budget.remaining),
            "burn_rates": {k: _round(v) for k, v in self.burn_rates.items()},
            "exhausts_at": None if self.exhausts_at is None else self.exhausts_at.isoformat().replace("+00:00", "Z"),
            "exhausted": self.exhausted,
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def scope_status(
    slo,
    scope,
    probes: int,
    good: int,
    windows: dict[float, tuple[int, int]],
    now: datetime,
    observed_s: float | None = None,
) -> ScopeStatus:
    """`windows`: window length (s) -> (bad, probes) in it, for every window of the SLO's pairs;
    `observed_s`: how much of the period the probes span (None: all of it), for the period's budget."""
    expected = period_probes(probes, slo.period_s if observed_s is None else observed_s, slo.period_s)
    budget = Budget(probes, good, slo.objective, expected)
    rates: dict[str, float | None] = {}
    for length in sorted({w.long_s for w in burn_windows(slo.period_s)}):
        bad, total = windows.get(length, (0, 0))
        rates[format_duration(length)] = burn_rate(bad, total, slo.error_budget) if total else None
    bad, total = windows.get(slo.period_s / EXHAUSTION_WINDOW, (0, 0))
    rate = burn_rate(bad, total, slo.error_budget)
    left_s = budget.exhausts_in_s(rate, slo.period_s)
    spent = budget.remaining is not None and budget.remaining <= 0
    # Spent already: no date to come (`exhausted` says it); not burning: it never runs out at this pace.
    exhausts_at = None if left_s is None or spent else now.astimezone(UTC) + timedelta(seconds=left_s)
    return ScopeStatus(
        slo.name,
        {**scope.labels(), "per": scope.per},
        scope.key,
        slo.objective,
        slo.period_s,
        budget,
        rates,
        exhausts_at,
        spent,
    )
