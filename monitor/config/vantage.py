"""`confirm:` of an alert rule (DESIGN §11): how many vantage points must see a condition before it
is the provider's, not one agent's path, and what it means (`required_agents`, the one quorum rule
of the detectors' alerts, monitor.alerts.quorum, and the SLO burn-rate alerts, monitor.slo.burn).
Its own module so the rule schema only names it."""

from __future__ import annotations

import math
from typing import Any

from monitor.config.errors import problem
from monitor.config.fields import number, percent, spec


@spec
class Confirm:
    """Exactly one of `agents: N` (at least N vantage points) or `share: 50%` (at least that share of
    the agents that probed the target within the rule's window)."""

    agents: number(1, 1000, integer=True) | None = None
    share: percent(1.0, positive=True) | None = None

    @classmethod
    def _prepare(cls, data: dict[str, Any]) -> tuple[dict[str, Any], list[dict]]:
        given = [k for k in ("agents", "share") if data.get(k) is not None]
        if len(given) != 1:
            return data, [problem((), "confirm needs exactly one of agents (a count) or share (like 50%)")]
        return data, []


def required_agents(confirm, probing_agents: int) -> int:
    """How many of `probing_agents` vantage points must see a condition before it is the target's.

    Never more than probed (a rule asking 3 of a 2-agent fleet is confirmed by both), never under 1.
    """
    probing = max(0, int(probing_agents))
    if probing <= 1:
        return 1
    agents = getattr(confirm, "agents", None)
    share = getattr(confirm, "share", None)
    if agents is not None:
        need = int(agents)
    elif share is not None:
        need = math.ceil(float(share) * probing - 1e-9)
    else:
        need = max(2, probing // 2 + 1)
    return max(1, min(need, probing))
