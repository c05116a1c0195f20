"""One agent alone whose own network path moved (DESIGN §11), pure: a ticket about the agent, not a page.

With two or more vantage points the quorum tells a path from a provider.
A target probed by one agent only is its own quorum, so an agent that
moves (a new region, a new egress, a VPN) or whose own network degrades
would page every provider it probes. One vantage point cannot compare
itself with another, but it can compare providers: when a latency
regression on one target is mostly the network part (attribution.py) and,
since the same moment, the same agent's network part towards at least one
*other* provider rose by at least half as much, no provider is at fault.
The alarm is then held as the agent's vantage alert (`vantage_severity`,
a ticket by default), which joins the alert about the agent when several
providers' targets alarm (agent_wide.py).

What still pages, as before: a provider part that moved; a network rise
towards one provider only (that provider's edge, or our route to it: one
agent cannot tell which); absolute `threshold` rules, which compare with a
bound, not with the series' own past; and an alert already firing as a
page. Once held, an episode stays a vantage alert until the detector
clears (the live vantage alert is the memory, so a restarted leader keeps
it), so it never turns into a page half-way through.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from monitor import fmt
from monitor.alerts.attribution import NETWORK
from monitor.alerts.records import FIRING, AlertRecord
from monitor.alerts.scope import Scope

# Another provider's network part must have risen by this share of the alarming target's network rise.
# A path change adds about the same round trips to every provider (same probe shape, same handshakes);
# half leaves room for noise in a median of a few samples, and two providers' edges slowing by
# comparable amounts in the same minutes by chance is far rarer than an agent moving.
OTHER_PROVIDER_SHARE = 0.5

TARGETS_JUDGED_PER_PROVIDER = 3  # a path that moved moves every target of a provider: a few say it

Attribute = Callable[[str, str, float], Mapping[str, Any] | None]  # (target id, agent, since epoch s) -> split


@dataclass(frozen=True, slots=True)
class LoneAlarm:
    """A target probed by one agent whose regression detector is pending or firing this round."""

    agent: str
    since_s: float  # where the change being judged began


def own_path_holds(
    alarms: Mapping[str, LoneAlarm],
    members: Mapping[str, Scope],
    live: Mapping[str, AlertRecord],
    attribute: Attribute,
) -> dict[str, tuple[str, ...]]:
    """target id -> the providers whose network path from its lone agent rose at once, for each alarm
    that is the agent's own path; an alarm already held as a vantage alert stays held."""
    held: dict[str, tuple[str, ...]] = {}
    by_provider: dict[str | None, list[str]] = {}
    for target, scope in members.items():
        by_provider.setdefault(scope.provider, []).append(target)
    for target, alarm in alarms.items():
        scope = members.get(target)
        if scope is None:
            continue
        page = live.get(scope.key)
        if page is not None and page.state == FIRING:
            continue  # already a page: it ends as one
        moved = providers_moved(target, scope.provider, alarm, by_provider, attribute)
        if moved or scope.seen_from(alarm.agent).key in live:  # held before: the live vantage alert remembers
            held[target] = moved or (scope.provider,)
    return held


def providers_moved(
    target: str,
    provider: str | None,
    alarm: LoneAlarm,
    by_provider: Mapping[str | None, Sequence[str]],
    attribute: Attribute,
) -> tuple[str, ...]:
    """The alarming target's provider and every other provider whose network part from the same agent
    rose since the change began by `OTHER_PROVIDER_SHARE` of the target's; () unless the target's own
    change is mostly the network and at least one other provider moved with it.

    Each other provider is judged on the first few of its targets the agent has a path history for:
    a path that moved moves them all, and an agent that moved with 5,000 targets alarming must not
    cost 5,000 x 5,000 attributions in one round."""
    own = attribute(target, alarm.agent, alarm.since_s)
    if not own or own["dominant"] != NETWORK or float(own["network_ms"]) <= 0.0:
        return ()
    floor_ms = OTHER_PROVIDER_SHARE * float(own["network_ms"])
    others = set()
    for other_provider, targets in by_provider.items():
        if other_provider == provider:
            continue
        judged = 0
        for other in targets:
            split = attribute(other, alarm.agent, alarm.since_s)
            if split is None:
                continue  # not probed from this agent, or too little history to say
            if float(split["network_ms"]) >= floor_ms:
                others.add(other_provider)
                break
            judged += 1
            if judged >= TARGETS_JUDGED_PER_PROVIDER:
                break
    return tuple(sorted({provider, *others})) if others else ()


def own_path_text(agent: str, providers: tuple[str, ...]) -> str:
    """`the network path from a towards p and q rose at once …` for a held alarm's summary."""
    if len(providers) > 1:
        return (
            f"the network path from {agent} towards {fmt.listed(providers)} rose at once and no other vantage point probes "
            f"this target: {agent}'s own path moved, not the provider (a ticket, not a page)"
        )
    return f"held as {agent}'s own path since it began (a ticket, not a page)"
