"""The down-minute rule of the public status (monitor.availability): pure values in, values out."""

from __future__ import annotations

import random

import numpy as np
import pytest

from monitor import availability as av
from monitor.config.vantage import required_agents


def test_the_quorum_is_the_alerts_default():
    assert [av.quorum(n) for n in range(1, 7)] == [1, 2, 2, 3, 3, 4]
    counts = np.arange(0, 40)
    assert av.quorums(counts).tolist() == [0] + [required_agents(None, int(n)) for n in counts[1:]]


@pytest.mark.parametrize(
    ("shares", "down"),
    [
        ([], 0.0),  # nobody probed: not down (and not probed: the caller counts neither)
        ([1.0], 1.0),  # one agent is its own quorum
        ([1.0, 0.0], 0.0),  # two probed: both must see it
        ([1.0, 1.0], 1.0),
        ([1.0, 0.0, 0.0], 0.0),  # one of three: that agent's path
        ([1.0, 1.0, 0.0], 1.0),  # two of three: down
        ([0.0, 1.0, 1.0, 0.0], 0.0),  # two of four is not more than half
        ([1.0, 1.0, 1.0, 0.0], 1.0),
        ([0.5, 1.0, 0.0], 0.5),  # an agent probing twice a minute, one failed: half a minute
    ],
)
def test_down_share_of_a_minute(shares, down):
    assert av.down_share(shares) == down


def test_minutes_by_the_quorum_vectorised():
    # (minute, agent, measured, failed): minute 0 only agent a fails; minute 1 a and b; minute 2 nobody
    # probes; minute 3 only c probed, and failed; minute 4 a's probes were all cancelled (measured 0).
    rows = [
        (0, "a", 1, 1), (0, "b", 1, 0), (0, "c", 1, 0),
        (1, "a", 1, 1), (1, "b", 1, 1), (1, "c", 1, 0),
        (3, "c", 1, 1),
        (4, "a", 0, 0), (4, "b", 1, 1), (4, "c", 1, 1),
    ]  # fmt: skip
    group = np.array([r[0] for r in rows])
    out = av.bucket_downtime(group, np.array([r[2] for r in rows]), np.array([r[3] for r in rows]), 5)
    assert out.down.tolist() == [0.0, 1.0, 0.0, 1.0, 1.0]
    assert out.probed.tolist() == [True, True, False, True, True]
    assert out.agents.tolist() == [3, 3, 0, 1, 2]  # a probed nothing measurable in minute 4


def test_an_hour_by_the_quorum_equals_its_down_minutes_when_failures_nest():
    """The hour-grain form: the k-th highest of the agents' failure shares over the hour is exactly the
    share of down minutes when the agents' failed minutes nest (an outage all see, some for longer)."""
    rng = random.Random(3)
    for _ in range(200):
        agents = rng.randint(1, 6)
        centre = rng.randint(0, 59)
        minutes = np.zeros((agents, 60))
        for a in range(agents):
            half = rng.randint(0, 30) if rng.random() < 0.8 else -1  # some agents see nothing
            if half >= 0:
                minutes[a, max(0, centre - half) : centre + half + 1] = 1.0
        per_minute = av.bucket_downtime(
            np.repeat(np.arange(60), agents), np.ones(60 * agents), minutes.T.reshape(-1), 60
        )
        per_hour = av.bucket_downtime(np.zeros(agents, dtype=int), np.full(agents, 60.0), minutes.sum(axis=1), 1)
        assert per_hour.down[0] * 60 == pytest.approx(per_minute.down.sum())


def test_an_hour_one_agent_failed_in_is_not_down_and_disjoint_failures_are_at_most_the_quorums():
    # Three agents: a failed 30 minutes, the others none: no downtime.
    out = av.bucket_downtime(np.zeros(3, dtype=int), np.full(3, 60.0), np.array([30.0, 0.0, 0.0]), 1)
    assert out.down[0] == 0.0
    # a and b failed 10 minutes each, at different times: the hour form counts the 10 (an upper bound).
    out = av.bucket_downtime(np.zeros(3, dtype=int), np.full(3, 60.0), np.array([10.0, 10.0, 0.0]), 1)
    assert out.down[0] * 60 == pytest.approx(10.0)


def test_the_latency_the_quorum_saw_ignores_one_slow_agent():
    group = np.array([0, 0, 0, 1, 1, 1])
    medians = np.array([3000.0, 400.0, 420.0, 3000.0, 2900.0, 410.0])
    value, counts = av.quorum_statistic(group, medians, 3)
    assert value[:2].tolist() == [420.0, 2900.0] and np.isnan(value[2])
    assert counts.tolist() == [3, 3, 0]


def test_maintenance_time_counts_neither_up_nor_down():
    starts = np.array([0.0, 3600.0, 7200.0])
    covered = av.covered_share(starts, 3600.0, [(1800.0, 5400.0)])
    assert covered.tolist() == [0.5, 0.5, 0.0]
    down = av.Downtime(np.array([1.0, 0.25, 0.5]), np.array([True, True, True]), np.array([2, 2, 2]))
    d, p = av.outside_maintenance(down, covered)
    assert d.tolist() == [0.5, 0.0, 0.5] and p.tolist() == [0.5, 0.5, 1.0]


def test_voters_without_a_row_in_the_bucket_saw_nothing_fail():
    # Three agents probe the target; in this minute only one has written its probe yet, a failure.
    alone = av.bucket_downtime(np.array([0]), np.array([1.0]), np.array([1.0]), 1, voters=np.array([3]))
    assert alone.down.tolist() == [0.0] and alone.probed.tolist() == [True]
    two = av.bucket_downtime(np.array([0, 0]), np.ones(2), np.ones(2), 1, voters=np.array([3]))
    assert two.down.tolist() == [1.0]
