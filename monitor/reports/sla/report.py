"""The SLA report's values (DESIGN §17): per contract, the measure, the credit, the evidence. Pure.

`assess(contract, provider, verdicts, period)` turns a contract's judged minutes
(`monitor.reports.sla.minutes.judge`) into a `ContractResult`; `SlaReport` holds one per contract
of the period. Renderers (`render.py`) only format these values.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from monitor.reports.sla.minutes import DOWN, OK, SLOW, UP, Evidence, Verdicts, runs


@dataclass(frozen=True)
class Period:
    start: datetime  # UTC, inclusive
    end: datetime  # UTC, exclusive
    label: str  # "2026-11" or "2026-11-01 to 2026-11-15"

    @property
    def minutes(self) -> int:
        return int((self.end - self.start).total_seconds() // 60)

    def minute(self, index: int) -> datetime:
        return self.start + timedelta(minutes=index)


@dataclass(frozen=True)
class BrokenMinute:
    """A minute that broke the contract: down (uptime) or slow (latency), with its evidence."""

    at: datetime
    targets: tuple[str, ...]
    vantage_points: tuple[str, ...]
    voters: int
    quorum: int
    error_kinds: dict[str, int] = field(default_factory=dict)
    request_ids: tuple[str, ...] = ()
    values: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class LeftOut:
    """Consecutive minutes left out of a measure for one reason."""

    start: datetime
    end: datetime  # exclusive
    reason: str

    @property
    def minutes(self) -> int:
        return int((self.end - self.start).total_seconds() // 60)


@dataclass(frozen=True)
class Measure:
    """Uptime or the latency SLI over the period."""

    name: str  # uptime | latency
    counted: int  # minutes measured (good + bad)
    bad: int  # down (uptime) or slow (latency) minutes
    objective: float | None
    broken: tuple[BrokenMinute, ...]
    left_out: tuple[LeftOut, ...]
    condition: str  # the minute's rule in words

    @property
    def value(self) -> float | None:
        return None if self.counted == 0 else 1 - self.bad / self.counted

    @property
    def met(self) -> bool | None:
        if self.value is None or self.objective is None:
            return None
        return self.value >= self.objective

    def left_out_by_reason(self) -> dict[str, int]:
        totals: Counter = Counter()
        for run in self.left_out:
            totals[run.reason] += run.minutes
        return dict(totals)


@dataclass(frozen=True)
class Credit:
    below: float
    credit: float


@dataclass(frozen=True)
class ContractResult:
    provider: str
    name: str
    match: dict[str, str]
    period: Period
    targets: tuple[str, ...]
    vantage_points: tuple[str, ...]
    uptime: Measure | None
    latency: Measure | None
    credit: Credit | None  # the tier reached; None when none is (or no credits / no uptime)
    credit_tiers: tuple[Credit, ...]
    claim_days: int
    method: tuple[str, ...]

    @property
    def claim_deadline(self) -> datetime:
        return self.period.end + timedelta(days=self.claim_days)


@dataclass(frozen=True)
class SlaReport:
    period: Period
    generated_at: datetime
    contracts: tuple[ContractResult, ...]
    without_contract: tuple[str, ...] = ()  # providers asked for that have no contract: nothing to report


def assess(contract: Any, provider: str, verdicts: Verdicts, period: Period) -> ContractResult:
    """`contract`: a `monitor.config.contracts.Contract`."""
    uptime = latency = None
    credit, tiers = None, ()
    if contract.uptime is not None and verdicts.uptime is not None:
        terms = contract.uptime
        uptime = _measure(
            "uptime", verdicts.uptime, DOWN, UP, verdicts.down, terms.committed, period, _down_rule(terms)
        )
        tiers = tuple(Credit(t.below, t.credit) for t in terms.credits)
        reached = terms.credit(uptime.value) if uptime.value is not None else None
        credit = Credit(reached.below, reached.credit) if reached else None
    if contract.latency is not None and verdicts.latency is not None:
        terms = contract.latency
        latency = _measure(
            "latency", verdicts.latency, SLOW, OK, verdicts.slow, terms.objective, period, terms.minute_ok.words()
        )
    return ContractResult(
        provider=provider,
        name=contract.label(provider),
        match=dict(contract.match),
        period=period,
        targets=verdicts.targets,
        vantage_points=verdicts.agents,
        uptime=uptime,
        latency=latency,
        credit=credit,
        credit_tiers=tiers,
        claim_days=int(contract.claim_days),
        method=method_words(contract, len(verdicts.agents)),
    )


def _measure(name, verdicts, bad, good, evidence: tuple[Evidence, ...], objective, period: Period, rule) -> Measure:
    counts = Counter(verdicts)
    broken = tuple(
        BrokenMinute(
            at=period.minute(e.minute),
            targets=e.targets,
            vantage_points=e.agents,
            voters=e.voters,
            quorum=e.quorum,
            error_kinds=dict(e.error_kinds),
            request_ids=e.request_ids,
            values=dict(e.values),
        )
        for e in evidence
    )
    left = {v for v in counts if v not in (bad, good)}
    left_out = tuple(LeftOut(period.minute(a), period.minute(b), reason) for a, b, reason in runs(verdicts, left))
    return Measure(name, counts[bad] + counts[good], counts[bad], objective, broken, left_out, rule)


def _down_rule(terms: Any) -> str:
    kinds = ", ".join(terms.minute_down.kinds)
    return f"at least {_pct(terms.minute_down.error_rate)} of the minute's probes failed with {kinds}"


def method_words(contract: Any, agents: int) -> tuple[str, ...]:
    """How the figures were reached, in sentences a provider's support can check."""
    lines = [
        "Every figure is over UTC minutes. Each probe's verdict stands for the minutes until the same "
        "vantage point's next probe of the same target (at most 1.5 times its usual interval).",
    ]
    if contract.uptime is not None:
        lines.append(
            f"A vantage point saw a minute down when {_down_rule(contract.uptime)} (its probes of all "
            "the contract's targets together); authentication errors, rate limits and failed answer "
            "checks never count against the provider."
        )
    if contract.latency is not None:
        lines.append(
            f"A vantage point saw a minute slow when the median of its successful probes missed "
            f"{contract.latency.minute_ok.words()}."
        )
    if agents >= 2:
        lines.append(
            f"{agents} vantage points probed the contract. A minute counts against the provider only when "
            "a quorum of the vantage points probing it saw it (more than half, and at least 2); a minute "
            "fewer saw is left out, neither up nor down."
        )
    else:
        lines.append(f"{agents} vantage point probed the contract: its word is the quorum.")
    lines.append(
        "Minutes inside our maintenance windows, and minutes no vantage point probed, are left out. "
        "Uptime is the up minutes over the counted minutes; the latency SLI is the fast-enough minutes "
        "over the counted latency minutes."
    )
    if contract.uptime is not None and contract.uptime.credits:
        lines.append("The credit is the tier with the lowest `below` that the uptime is under.")
    return tuple(lines)


def _pct(fraction: float) -> str:
    return f"{fraction * 100:g}%"


def percent(value: float | None, digits: int = 3) -> str:
    """99.896% — cut, never rounded up: 99.9996% is not shown as 100%."""
    if value is None:
        return "n/a"
    scale = 10 ** (digits + 2)
    cut = math.floor(value * scale + 1e-6)  # the 1e-6: 0.99896 is 99895.99999… as a float
    return f"{cut / 10**digits:.{digits}f}%"


def utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M")


__all__ = ["ContractResult", "LeftOut", "Measure", "Period", "SlaReport", "assess"]
