"""A contract's minutes, judged from the probes (DESIGN §17, §11). Pure: plain values in, verdicts out.

The contract's measure is the UTC minute. What the probes say of a minute:

- **Which probes speak for it.** An agent probes each target every few minutes, not every minute,
  so a probe's verdict stands for the minutes after it until the same agent's next probe of the
  same target, and at most `hold` minutes (1.5 × the series' usual gap, rounded up: a late probe
  leaves no hole, a stopped agent stops voting soon after). Several probes of one series in one
  minute (a confirmation probe beside the scheduled one) are taken together.
- **One agent's view.** Over the contract's targets, the share of the held probes that failed with a
  kind the contract counts (`minute_down.kinds`: server_error, timeout, connect, stream_error by
  default; cancelled probes are not probes). At least `error_rate` of them: the agent saw the
  minute down. Its latency is the median of its held successful probes' TPS (or TTFT).
- **The quorum (DESIGN §11).** The voters are the agents with a held probe in the minute; k is the
  alerts' quorum over them (more than half, at least 2 of 2 or more), and at least 2 whenever the
  contract was probed from 2 or more vantage points in the period, so one agent's word never counts
  where others could have been asked. A minute at least k voters saw down is down; one fewer than k
  (but not none) saw down is left out, neither up nor down: the provider's outage is not proven, and
  calling the minute up would hide what an agent saw. Latency: the same, over the agents with a
  latency.
- **Left out**: minutes inside our maintenance windows (planned work over the contract's targets:
  a covered target's probes are dropped, and a minute none of whose probes remain is
  `maintenance`), minutes without a voter (`no data`), and the unconfirmed ones above.

Uptime is the up minutes over the counted (up + down) minutes; the latency SLI is the ok minutes
over the counted latency minutes.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from monitor.availability import quorums

MAX_HOLD_MIN = 90  # an hourly probe's verdict still stands until the next one (1.5 × 60)
HOLD_FACTOR = 1.5
EPSILON = 1e-9  # 5 of 100 probes failed is an error rate of 5%, not just under it

SERVER_KINDS_DEFAULT = frozenset({"server_error", "timeout", "connect", "stream_error"})  # contracts' default
UP, DOWN, OK, SLOW = "up", "down", "ok", "slow"
MAINTENANCE, NO_DATA = "maintenance", "no data"
ONE_VANTAGE = "seen from one vantage point only"
BELOW_QUORUM = "seen by fewer vantage points than the quorum"
NO_LATENCY = "no successful probe"


@dataclass(frozen=True, slots=True)
class Probe:
    """One sample as the SLA reads it. `value`: the latency metric of an ok probe (TPS or TTFT ms)."""

    at_s: float  # epoch seconds (started_at)
    agent: str
    target: str
    ok: bool
    error_kind: str | None = None
    value: float | None = None
    request_id: str | None = None


@dataclass(frozen=True)
class Terms:
    """What the minutes are judged by, from a contract (`monitor.config.contracts`)."""

    error_rate: float | None = None  # None: no uptime terms
    kinds: frozenset[str] = frozenset()
    latency_ok: object | None = None  # a MinuteOk: .ok(values) -> bools (a comparison); None: no latency terms


@dataclass(frozen=True)
class Evidence:
    """What a minute that broke the contract rests on."""

    minute: int  # index in the period
    targets: tuple[str, ...]  # the targets whose probes failed (or were slow)
    agents: tuple[str, ...]  # the vantage points that saw it
    voters: int
    quorum: int
    error_kinds: Mapping[str, int] = field(default_factory=dict)
    request_ids: tuple[str, ...] = ()
    values: Mapping[str, float] = field(default_factory=dict)  # latency: agent -> its median


@dataclass(frozen=True)
class Verdicts:
    """Per minute of the period: a verdict (up/down, ok/slow) or the reason it is left out."""

    uptime: tuple[str, ...] | None
    latency: tuple[str, ...] | None
    down: tuple[Evidence, ...] = ()
    slow: tuple[Evidence, ...] = ()
    agents: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()


@dataclass
class _Series:
    """One agent's probes of one target, held over the period's minutes."""

    agent: str
    target: str
    probes: list[Probe]  # by time
    bounds: np.ndarray  # probe-minute i holds probes[bounds[i]:bounds[i + 1]]
    src: np.ndarray  # per period minute: the probe-minute that speaks for it, or -1
    counted: np.ndarray  # per probe-minute: probes counted
    failed: np.ndarray  # per probe-minute: probes failed with a counted kind
    value: np.ndarray  # per probe-minute: median latency value of its ok probes, NaN without one

    def at(self, i: int) -> list[Probe]:
        return self.probes[self.bounds[i] : self.bounds[i + 1]]


def judge(
    probes: Iterable[Probe],
    start_s: float,
    n_minutes: int,
    terms: Terms,
    maintenance: Mapping[str, Sequence[tuple[float, float]]] | None = None,
    targets: Iterable[str] = (),
) -> Verdicts:
    """Judge each minute [start_s + 60 i, start_s + 60 (i + 1)) of the period. `maintenance`: per
    target, [begin, end) epoch-second spans of our windows; `targets`: the contract's targets (a
    minute every one of which is under maintenance is `maintenance` even without probes)."""
    series = _series(probes, start_s, n_minutes, terms)
    all_targets = sorted(set(targets) | {s.target for s in series})
    covered = {t: _covered(spans, start_s, n_minutes) for t, spans in (maintenance or {}).items()}
    whole_scope = _whole_scope(covered, all_targets, n_minutes)
    agents = sorted({s.agent for s in series})
    index = {a: i for i, a in enumerate(agents)}
    had = np.zeros((len(agents), n_minutes), dtype=bool)  # before maintenance is taken out
    probes_n = np.zeros((len(agents), n_minutes))
    failed_n = np.zeros((len(agents), n_minutes))
    per_agent_values: dict[str, list[np.ndarray]] = {a: [] for a in agents}
    for s in series:
        a = index[s.agent]
        held = s.src >= 0
        had[a] |= held
        mask = covered.get(s.target)
        if mask is not None:
            held = held & ~mask
            s.src = np.where(held, s.src, -1)
        at = np.clip(s.src, 0, None)
        probes_n[a] += np.where(held, s.counted[at], 0)
        failed_n[a] += np.where(held, s.failed[at], 0)
        per_agent_values[s.agent].append(np.where(held, s.value[at], np.nan))
    voting = probes_n > 0
    voters = voting.sum(axis=0)
    floor = 2 if len(agents) >= 2 else 1
    quorum = np.where(voters > 0, np.maximum(quorums(voters), floor), 0)
    planned = whole_scope | ((voters == 0) & had.any(axis=0))

    uptime = down = None
    if terms.error_rate is not None:
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = np.where(voting, failed_n / np.maximum(probes_n, 1), 0.0)
        saw_down = voting & (rate >= terms.error_rate - EPSILON)
        uptime = _classify(saw_down.sum(axis=0), voters, quorum, planned, DOWN, UP)
        down = tuple(
            _down_evidence(
                m, series, [agents[a] for a in np.flatnonzero(saw_down[:, m])], voters[m], quorum[m], terms.kinds
            )
            for m in range(n_minutes)
            if uptime[m] == DOWN
        )
    latency = slow = None
    if terms.latency_ok is not None:
        medians = np.full((len(agents), n_minutes), np.nan)
        for a, arrays in per_agent_values.items():
            if arrays:
                medians[index[a]] = _nanmedian(np.vstack(arrays))
        measured = ~np.isnan(medians)
        lat_voters = measured.sum(axis=0)
        lat_quorum = np.where(lat_voters > 0, np.maximum(quorums(lat_voters), floor), 0)
        # MinuteOk.ok is a comparison, so it takes the whole array at once
        breached = measured & ~np.asarray(terms.latency_ok.ok(np.nan_to_num(medians, nan=0.0)), dtype=bool)
        latency = _classify(breached.sum(axis=0), lat_voters, lat_quorum, planned, SLOW, OK, empty=NO_LATENCY)
        latency = tuple(NO_DATA if (v == NO_LATENCY and voters[m] == 0) else v for m, v in enumerate(latency))
        slow = tuple(
            _slow_evidence(m, series, agents, medians[:, m], breached[:, m], lat_voters[m], lat_quorum[m])
            for m in range(n_minutes)
            if latency[m] == SLOW
        )
    return Verdicts(uptime, latency, down or (), slow or (), tuple(agents), tuple(all_targets))


def _classify(saw, voters, quorum, planned, bad: str, good: str, empty: str = NO_DATA) -> tuple[str, ...]:
    out = np.full(len(voters), good, dtype=object)
    out[saw > 0] = np.where(saw[saw > 0] == 1, ONE_VANTAGE, BELOW_QUORUM)
    out[(saw >= quorum) & (saw > 0)] = bad
    out[voters == 0] = empty
    out[planned] = MAINTENANCE
    return tuple(str(v) for v in out)


def _series(probes: Iterable[Probe], start_s: float, n_minutes: int, terms: Terms) -> list[_Series]:
    grouped: dict[tuple[str, str], list[Probe]] = {}
    for p in probes:
        if p.error_kind == "cancelled":  # the service stopped mid-probe: not a probe of the provider
            continue
        grouped.setdefault((p.agent, p.target), []).append(p)
    return [_one_series(agent, target, ps, start_s, n_minutes, terms) for (agent, target), ps in grouped.items()]


def _one_series(agent: str, target: str, probes: list[Probe], start_s: float, n_minutes: int, terms: Terms):
    # One pass, no per-minute objects: a month of 30 targets from 3 vantage points is 780k probes, and
    # the evidence (kinds, request ids) is read back from `probes` only for the few minutes that broke.
    probes.sort(key=lambda p: p.at_s)
    minute_of = np.floor((np.fromiter((p.at_s for p in probes), float, len(probes)) - start_s) / 60).astype(np.int64)
    first = np.flatnonzero(np.r_[True, minute_of[1:] != minute_of[:-1]])
    bounds = np.r_[first, len(probes)]
    kinds = terms.kinds
    failed_each = np.fromiter((not p.ok and p.error_kind in kinds for p in probes), float, len(probes))
    value_each = np.fromiter(
        (p.value if p.ok and p.value is not None else math.nan for p in probes), float, len(probes)
    )
    counted = np.diff(bounds).astype(float)
    failed = np.add.reduceat(failed_each, first)
    value = value_each[first].copy()
    for i in np.flatnonzero(counted > 1):  # a confirmation probe beside the scheduled one: rare
        chunk = value_each[bounds[i] : bounds[i + 1]]
        value[i] = np.nanmedian(chunk) if not np.isnan(chunk).all() else math.nan
    minutes = minute_of[first]
    hold = _hold_minutes(probes)
    grid = np.arange(n_minutes, dtype=np.int64)
    src = np.searchsorted(minutes, grid, side="right") - 1
    stands = (src >= 0) & (grid < minutes[np.clip(src, 0, None)] + hold)
    return _Series(agent, target, probes, bounds, np.where(stands, src, -1), counted, failed, value)


def _hold_minutes(probes: Sequence[Probe]) -> int:
    """How many minutes a probe's verdict stands: 1.5 × the median gap between the series' probes."""
    times = sorted({p.at_s for p in probes})
    if len(times) < 2:
        return 1
    gap_s = float(np.median(np.diff(times)))
    return int(min(MAX_HOLD_MIN, max(1, math.ceil(HOLD_FACTOR * gap_s / 60))))


def _covered(spans: Sequence[tuple[float, float]], start_s: float, n_minutes: int) -> np.ndarray:
    """Per minute: does any span overlap it (a minute partly in a window is the window's)?"""
    out = np.zeros(n_minutes, dtype=bool)
    for begin, end in spans:
        first = max(0, math.floor((begin - start_s) / 60))
        last = min(n_minutes, math.ceil((end - start_s) / 60))
        if last > first:
            out[first:last] = True
    return out


def _whole_scope(covered: Mapping[str, np.ndarray], targets: Sequence[str], n_minutes: int) -> np.ndarray:
    if not targets or any(t not in covered for t in targets):
        return np.zeros(n_minutes, dtype=bool)
    return np.logical_and.reduce([covered[t] for t in targets])


def _nanmedian(stack: np.ndarray) -> np.ndarray:
    out = np.full(stack.shape[1], np.nan)
    some = ~np.isnan(stack).all(axis=0)
    if some.any():
        out[some] = np.nanmedian(stack[:, some], axis=0)
    return out


def _down_evidence(
    m: int, series: list[_Series], agents: list[str], voters: int, quorum: int, kinds_counted: frozenset[str]
) -> Evidence:
    kinds: Counter = Counter()
    targets, ids = set(), []
    for s in series:
        i = s.src[m]
        if s.agent in agents and i >= 0 and s.failed[i] > 0:
            bad = [p for p in s.at(i) if not p.ok and p.error_kind in kinds_counted]
            targets.add(s.target)
            kinds.update(p.error_kind for p in bad)
            ids += [p.request_id for p in bad if p.request_id]
    return Evidence(m, tuple(sorted(targets)), tuple(agents), int(voters), int(quorum), dict(kinds), _unique(ids))


def _slow_evidence(m, series, agents, medians, breached, voters, quorum) -> Evidence:
    saw = [agents[a] for a in np.flatnonzero(breached)]
    targets, ids = set(), []
    for s in series:
        i = s.src[m]
        if s.agent in saw and i >= 0 and not math.isnan(s.value[i]):
            targets.add(s.target)
            ids += [p.request_id for p in s.at(i) if p.ok and p.value is not None and p.request_id]
    values = {agents[a]: float(medians[a]) for a in np.flatnonzero(breached)}
    return Evidence(m, tuple(sorted(targets)), tuple(saw), int(voters), int(quorum), {}, _unique(ids), values)


def _unique(ids: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(ids))


def runs(verdicts: Sequence[str], keep: Iterable[str]) -> list[tuple[int, int, str]]:
    """Consecutive minutes with the same verdict among `keep`: (first, last + 1, verdict)."""
    wanted, out = set(keep), []
    for m, v in enumerate(verdicts):
        if v not in wanted:
            continue
        if out and out[-1][1] == m and out[-1][2] == v:
            out[-1] = (out[-1][0], m + 1, v)
        else:
            out.append((m, m + 1, v))
    return out


__all__ = ["Evidence", "Probe", "Terms", "Verdicts", "judge", "runs"]
