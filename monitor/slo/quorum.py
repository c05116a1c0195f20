"""The vantage quorum of DESIGN §11, for SLO burn-rate alerts.

To be unified with `monitor/alerts/quorum.py` (the detectors' quorum) when both land: one rule,
one place. Kept here meanwhile so the SLO package does not depend on a module still in flight.
"""

from __future__ import annotations


def quorum_needed(voters: int) -> int:
    """Agents that must agree: more than half of those that probed the scope within the window,
    hence at least 2 whenever 2 or more did; a single agent decides alone (today's behaviour)."""
    return voters // 2 + 1 if voters > 0 else 1


def quorum_holds(holders: int, voters: int) -> bool:
    return voters > 0 and holders >= quorum_needed(voters)
