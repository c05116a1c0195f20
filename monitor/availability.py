"""What counts as down on the public status (DESIGN §11, §16): the quorum's minutes. Pure.

One vantage point's trouble (its ISP, its resolver, a congested peering link) is not the provider's
outage, so the public status never counts what one agent saw on its own. The rule, per target:

- The voters are the agents that probed the target within the status window around the minute (the
  live status reads 15 minutes); the quorum is the alerts' default over them (`required_agents`,
  DESIGN §11): more than half, and at least 2 whenever 2 or more did; one agent is its own quorum.
- A minute is down when at least a quorum of the voters saw it fail. An agent saw the minute fail
  by the share of its probes there that failed (cancelled probes left out): with one probe a minute,
  0 or 1; a voter with no probe in that minute (its probe still in flight, or late into the next
  minute) saw nothing fail. In one formula: the minute's down share is the k-th highest of the
  voters' failure shares, k the quorum. So with 3 agents, a minute two of them saw fail is down, one
  only one of them saw fail is up; with 1 agent, every minute it saw fail is down.
- A minute no agent probed is neither up nor down: uptime is down minutes over probed minutes.
  Minutes are cut half a minute away from the target's probes (every agent probes a target on one
  schedule), so one round of probes falls in one minute.
- Longer buckets whose minutes are not kept (an hour of the rollups) take the same order statistic
  over the bucket, its voters the agents that probed it in that hour: the k-th highest of their
  failure shares over the hour. It equals the share of down minutes whenever the agents' failed
  minutes nest, as a provider's outage does (every agent sees it, some for longer), and it is 0 for
  an hour in which fewer than k agents saw any failure at all.

The same statistic gives the latency the quorum saw: the k-th highest of the agents' medians, so
one agent's slow path does not make a model slow either (`quorum_statistic`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from monitor.config.vantage import required_agents


def quorum(probing: int) -> int:
    """How many of `probing` agents make the quorum (the alerts' default `confirm:`)."""
    return required_agents(None, probing)


def quorums(probing: np.ndarray) -> np.ndarray:
    """`quorum` of each count (vectorised; 0 for no agent)."""
    n = np.asarray(probing, dtype=np.int64)
    need = np.where(n <= 1, 1, np.maximum(2, n // 2 + 1))
    return np.where(n <= 0, 0, np.minimum(need, np.maximum(n, 1)))


def down_share(failure_shares: Sequence[float]) -> float:
    """A bucket's down share from each probing agent's failure share (0..1) in it; 0 with no agent."""
    shares = sorted((float(s) for s in failure_shares), reverse=True)
    return shares[quorum(len(shares)) - 1] if shares else 0.0


def quorum_statistic(
    group: np.ndarray, values: np.ndarray, n_groups: int, voters: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per group, the k-th highest of its rows' values (NaN rows left out), k the quorum of the rows
    counted, or of `voters` (per group) when given: then a group with fewer than k rows has 0 (the
    voters without a row count as 0). And the rows counted. NaN for a group with no value. A row is
    one agent's figure in a bucket."""
    group = np.asarray(group, dtype=np.int64)
    values = np.asarray(values, dtype=float)
    keep = ~np.isnan(values)
    g, v = group[keep], values[keep]
    order = np.lexsort((-v, g))  # by group, then highest first
    g, v = g[order], v[order]
    counts = np.bincount(g, minlength=n_groups)[:n_groups]
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    out = np.full(n_groups, np.nan)
    need = quorums(counts if voters is None else np.maximum(np.asarray(voters, dtype=np.int64), counts))
    has = counts > 0
    enough = has & (counts >= need)
    out[enough] = v[starts[enough] + need[enough] - 1]
    out[has & ~enough] = 0.0
    return out, counts


@dataclass(frozen=True)
class Downtime:
    """Per bucket: its down share (0..1; 0 where nobody probed), whether anyone probed it, and how
    many agents did."""

    down: np.ndarray
    probed: np.ndarray
    agents: np.ndarray


def bucket_downtime(
    group: np.ndarray, measured: np.ndarray, failed: np.ndarray, n_groups: int, voters: np.ndarray | None = None
) -> Downtime:
    """The rule over buckets. Rows are one agent's counts in one bucket (`group`): probes measured
    (cancelled left out) and failed. Rows of the same (bucket, agent) must be summed beforehand.
    `voters`: per bucket, the agents the quorum is taken of (default: those with a row in it)."""
    measured = np.asarray(measured, dtype=float)
    failed = np.asarray(failed, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(measured > 0, np.clip(failed / np.maximum(measured, 1), 0.0, 1.0), np.nan)
    down, agents = quorum_statistic(group, share, n_groups, voters)
    probed = agents > 0
    return Downtime(np.where(probed, down, 0.0), probed, agents)


def covered_share(starts_s: np.ndarray, length_s: float, intervals_s: Sequence[tuple[float, float]]) -> np.ndarray:
    """The share (0..1) of each bucket [start, start + length) inside the intervals (epoch seconds;
    overlapping intervals count once where they overlap only as far as a bucket's whole length)."""
    starts = np.asarray(starts_s, dtype=float)
    out = np.zeros(starts.shape)
    for begin, end in intervals_s:
        out += np.clip(np.minimum(end, starts + length_s) - np.maximum(begin, starts), 0.0, length_s)
    return np.minimum(out / length_s, 1.0)


def outside_maintenance(downtime: Downtime, covered: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(down, probed) shares of each bucket once the time inside a maintenance window (`covered`, the
    share of each bucket) counts neither up nor down: a failure there is taken to be the maintenance's."""
    covered = np.clip(np.asarray(covered, dtype=float), 0.0, 1.0)
    probed = np.where(downtime.probed, 1.0 - covered, 0.0)
    return np.clip(downtime.down - covered, 0.0, probed), probed
