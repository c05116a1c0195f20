"""`confirm:` of an alert rule (DESIGN §11): how many vantage points must see a condition before it
is the provider's, not one agent's path. Its own module so the rule schema only names it."""

from __future__ import annotations

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
