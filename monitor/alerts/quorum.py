"""Quorum of vantage points (DESIGN §11), pure: is a condition the provider's or one agent's path?

Every detector keeps one series per (rule, target, agent). Per target, this
module turns the agents' detector states into one verdict:

- the target (and so its provider-region group) is alerting when the
  condition holds from `required_agents(confirm, probing)` vantage points;
- below that, each agent where it holds gets a vantage alert
  (`scope.agent`), and an agent whose path degrades towards several
  providers at once gets one alert about the agent (`agent_wide`).

`confirm` is anything with `agents` (a count) or `share` (a fraction), or
None for the default: more than half of the agents that probed the target
within the rule's window, and at least 2 whenever 2 or more did. One agent
is its own quorum, so a single-agent deployment behaves as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from monitor import fmt
from monitor.config.vantage import required_agents

OK, PENDING, FIRING = "ok", "pending", "firing"  # the detector states (detectors/base.py)
MIN_PROVIDERS_FOR_AGENT_ALERT = 2  # one agent seeing this many providers degrade at once: its path, one alert


@dataclass(frozen=True, slots=True)
class Verdict:
    """One target's verdict for one evaluation.

    `state` is the target-level state (what a target alert follows); `vantage`
    the agents whose own detector is pending/firing while the target is not
    at quorum (each a vantage alert); `agents` where the condition holds,
    `agents_clear` the probing agents where it does not.
    """

    state: str
    required: int
    agents: tuple[str, ...]
    agents_clear: tuple[str, ...]
    vantage: tuple[str, ...]
    # A lone agent's alarm held as its own path (own_path.py): the providers its network path rose towards.
    own_path: tuple[str, ...] = ()


def verdict(states: Mapping[str, str], probing: Iterable[str], confirm, *, target_firing: bool = False) -> Verdict:
    """The target's verdict from each agent's detector state.

    `probing` are the agents that probed the target within the rule's window
    (agents not probing have no say, whatever their detector remembers).
    `target_firing` is whether the target alert is already firing: it then
    stays while any agent still sees the condition (hysteresis, as for
    provider-region groups), so the tail of a provider incident never turns
    into vantage alerts as agents recover one by one.
    """
    probing = sorted(set(probing))
    required = required_agents(confirm, len(probing))
    firing = [a for a in probing if states.get(a) == FIRING]
    hot = [a for a in probing if states.get(a) in (PENDING, FIRING)]
    clear = tuple(a for a in probing if a not in hot)
    if target_firing and firing:
        return Verdict(FIRING, required, tuple(hot), clear, ())
    if len(firing) >= required:
        return Verdict(FIRING, required, tuple(hot), clear, ())
    if len(hot) >= required:
        return Verdict(PENDING, required, tuple(hot), clear, ())
    return Verdict(OK, required, tuple(hot), clear, tuple(hot))


def agent_wide(vantage_providers: Mapping[str, Iterable[str]]) -> set[str]:
    """Agents whose vantage alerts span several providers at once: one alert about the agent's
    path, not one per target. `vantage_providers` maps an agent to the providers of its firing
    vantage alerts."""
    return {
        agent for agent, providers in vantage_providers.items() if len(set(providers)) >= MIN_PROVIDERS_FOR_AGENT_ALERT
    }


def seen_from_text(agents: Iterable[str], agents_clear: Iterable[str]) -> str:
    """`seen from eu-west only; us-east and ap-south normal` (a vantage alert's summary tail)."""
    seen, clear = list(agents), list(agents_clear)
    text = f"seen from {fmt.listed(seen, empty='no agent')}{' only' if clear else ''}"
    if clear:
        text += f"; {fmt.listed(clear)} normal"
    return text
