"""The SLA minute rules (monitor.reports.sla.minutes, DESIGN §17): plain probes in, verdicts out."""

from __future__ import annotations

from monitor.config.contracts import MinuteOk
from monitor.reports.sla.minutes import (
    BELOW_QUORUM,
    DOWN,
    MAINTENANCE,
    NO_DATA,
    NO_LATENCY,
    OK,
    ONE_VANTAGE,
    SLOW,
    UP,
    Probe,
    Terms,
    judge,
)

T0 = 1_793_491_200.0  # 2026-11-01 00:00 UTC
SERVER = frozenset({"server_error", "timeout", "connect", "stream_error"})
UPTIME = Terms(error_rate=0.05, kinds=SERVER)


def every(agent, minutes, *, target="p/m@r:q", step=1, fail=(), kind="server_error", value=None, offset_s=5):
    """A probe each `step` minutes over range `minutes`; those in `fail` failed with `kind`."""
    return [
        Probe(T0 + m * 60 + offset_s, agent, target, m not in fail, None if m not in fail else kind,
              value if m not in fail else None, f"{agent}-{m}")
        for m in range(*minutes) if m % step == 0
    ]  # fmt: skip


def test_one_agent_is_its_own_quorum_and_counts_server_side_failures_only():
    probes = every("a", (0, 10), fail={2, 3}) + every("a", (0, 10), target="p/m@r:other", fail={5}, kind="auth")
    verdicts = judge(probes, T0, 10, UPTIME)
    assert verdicts.uptime == (UP, UP, DOWN, DOWN, UP, UP, UP, UP, UP, UP)
    assert [e.minute for e in verdicts.down] == [2, 3]
    assert verdicts.down[0].targets == ("p/m@r:q",) and verdicts.down[0].request_ids == ("a-2",)
    assert verdicts.down[0].error_kinds == {"server_error": 1} and verdicts.down[0].agents == ("a",)


def test_a_minute_one_of_three_agents_saw_is_left_out_and_two_of_three_is_down():
    probes = every("a", (0, 6), fail={1, 2}) + every("b", (0, 6), fail={2}) + every("c", (0, 6), fail={4})
    verdicts = judge(probes, T0, 6, UPTIME)
    assert verdicts.uptime == (UP, ONE_VANTAGE, DOWN, UP, ONE_VANTAGE, UP)
    assert verdicts.down[0].agents == ("a", "b") and verdicts.down[0].voters == 3 and verdicts.down[0].quorum == 2


def test_with_several_vantage_points_a_lone_voter_never_makes_a_minute_down():
    # b stops probing after minute 2; a alone then sees failures: not proven, left out.
    probes = every("a", (0, 8), fail={6, 7}) + every("b", (0, 3))
    verdicts = judge(probes, T0, 8, UPTIME)
    assert verdicts.uptime[6:] == (ONE_VANTAGE, ONE_VANTAGE)
    assert verdicts.down == ()


def test_four_agents_two_seeing_it_is_below_the_quorum_of_three():
    probes = [p for a, f in (("a", {1}), ("b", {1}), ("c", set()), ("d", set())) for p in every(a, (0, 3), fail=f)]
    assert judge(probes, T0, 3, UPTIME).uptime == (UP, BELOW_QUORUM, UP)


def test_a_probe_speaks_for_the_minutes_until_the_next_one_and_not_for_ever():
    # every 5 minutes: the verdict of minute 10's failed probe stands for 10..14; the agent stops at 20.
    probes = every("a", (0, 21), step=5, fail={10})
    verdicts = judge(probes, T0, 40, UPTIME)
    assert verdicts.uptime[9:16] == (UP, DOWN, DOWN, DOWN, DOWN, DOWN, UP)
    # hold = ceil(1.5 × 5) = 8 minutes after the last probe at 20: minutes 28.. have no data
    assert verdicts.uptime[27] == UP and verdicts.uptime[28:] == (NO_DATA,) * 12


def test_the_error_rate_is_over_all_the_contracts_targets_and_reaches_its_threshold_exactly():
    # 20 targets, one failing: 5% of the minute's probes: down at error_rate 5%, up at 6%.
    probes = [p for t in range(20) for p in every("a", (0, 1), target=f"p/m@r:t{t}", fail={0} if t == 0 else set())]
    assert judge(probes, T0, 1, UPTIME).uptime == (DOWN,)
    assert judge(probes, T0, 1, Terms(error_rate=0.06, kinds=SERVER)).uptime == (UP,)


def test_maintenance_leaves_minutes_out_even_when_they_failed_and_without_probes():
    probes = every("a", (0, 6), fail={1, 2, 3})
    window = {"p/m@r:q": [(T0 + 60, T0 + 150)]}  # 00:01 to 00:02:30: minutes 1 and 2
    verdicts = judge(probes, T0, 6, UPTIME, window, ["p/m@r:q"])
    assert verdicts.uptime == (UP, MAINTENANCE, MAINTENANCE, DOWN, UP, UP)
    # a window over the whole scope with no probe at all is still maintenance, not `no data`
    assert judge([], T0, 3, UPTIME, {"p/m@r:q": [(T0, T0 + 120)]}, ["p/m@r:q"]).uptime == (
        MAINTENANCE, MAINTENANCE, NO_DATA,
    )  # fmt: skip


def test_a_window_over_one_of_two_targets_drops_only_that_targets_probes():
    probes = every("a", (0, 3), fail={1}) + every("a", (0, 3), target="p/m@r:other")
    verdicts = judge(probes, T0, 3, UPTIME, {"p/m@r:q": [(T0, T0 + 180)]}, ["p/m@r:q", "p/m@r:other"])
    assert verdicts.uptime == (UP, UP, UP)


def test_latency_minutes_by_the_quorum_of_the_agents_medians():
    terms = Terms(latency_ok=MinuteOk(tps_at_least=50))
    fast = {"value": 80.0}
    probes = (
        every("a", (0, 2), **fast) + every("a", (2, 4), value=30.0)
        + every("b", (0, 3), **fast) + every("b", (3, 4), value=30.0)
        + every("c", (0, 1), **fast) + every("c", (1, 4), value=30.0)
    )  # fmt: skip
    verdicts = judge(probes, T0, 4, terms)
    assert verdicts.uptime is None
    assert verdicts.latency == (OK, ONE_VANTAGE, SLOW, SLOW)
    assert verdicts.slow[0].values == {"a": 30.0, "c": 30.0}
    failed = every("a", (0, 2), fail={0, 1})
    # every minute: hold = ceil(1.5 × 1) = 2 minutes, so minute 1's failure stands for minute 2 too
    assert judge(failed, T0, 4, terms).latency == (NO_LATENCY, NO_LATENCY, NO_LATENCY, NO_DATA)


def test_ttft_at_most():
    terms = Terms(latency_ok=MinuteOk(ttft_at_most_s=2.0))
    probes = every("a", (0, 1), value=1999.0) + every("a", (1, 2), value=2001.0)
    assert judge(probes, T0, 2, terms).latency == (OK, SLOW)


def test_cancelled_probes_are_not_probes():
    probes = every("a", (0, 4), fail={2}, kind="cancelled")
    # minute 2's probe is dropped, not failed: minute 1's verdict stands for it (1.5 × the 90 s median gap)
    assert judge(probes, T0, 4, UPTIME).uptime == (UP, UP, UP, UP)
