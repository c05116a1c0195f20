"""From per-agent evaluations to target and vantage evaluations (DESIGN §11), pure.

The engine and `firsttoken backtest` feed each (rule, target, agent)
detector its agent's samples, in time order across agents, and hand each
evaluation here. `TargetFold` keeps the agents' latest states and turns
every evaluation into:

- one evaluation of the target, whose state is the quorum's verdict
  (quorum.verdict): a target alert follows it exactly as it followed the
  pooled detector before, so grouping, inhibition, holds and silences work
  on top of the quorum unchanged;
- one evaluation of the evaluating agent's vantage alert: its own detector's
  state while the target is below the quorum, `ok` once the quorum has it
  (the target alert then says it, with this agent in `agents`).

A target probed by a single agent passes that agent's evaluations through
untouched: one agent behaves exactly as a pooled series did.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from monitor.alerts.detectors.base import FIRING, OK, Evaluation
from monitor.alerts.quorum import Verdict, verdict


@dataclass
class TargetFold:
    """One (rule, target) across its agents for one pass over new samples."""

    probing: frozenset[str]  # the agents that probed the target within the rule's window
    confirm: object = None
    target_firing: bool = False  # the target alert was firing before this pass
    states: dict[str, str] = field(default_factory=dict)  # agent -> its detector's state
    last: dict[str, Evaluation] = field(default_factory=dict)  # agent -> its latest judged evaluation
    target: list[Evaluation] = field(default_factory=list)
    vantage: dict[str, list[Evaluation]] = field(default_factory=dict)
    verdict: Verdict | None = None

    @property
    def single(self) -> bool:
        return len(self.probing) <= 1 and len(self.states) <= 1

    def seed(self, agent: str, state: str) -> None:
        """An agent's detector state before this pass (from memory or its checkpoint)."""
        self.states[agent] = state

    def add(self, agent: str, ev: Evaluation) -> None:
        self.states[agent] = ev.state
        if ev.evaluated:
            self.last[agent] = ev
        probing = self.probing | {agent} if len(self.probing) == 0 else self.probing
        if agent not in probing:
            return  # a departed agent's straggler: it has no say any more
        if self.single:
            self.target.append(ev)
            self.verdict = verdict(self.states, probing, self.confirm, target_firing=self.target_firing)
            self.target_firing = ev.state == FIRING
            self.vantage.setdefault(agent, []).append(replace(ev, state=OK, alarm_started=False))
            return
        v = verdict(self.states, probing, self.confirm, target_firing=self.target_firing)
        self.verdict = v
        self.target_firing = v.state == FIRING
        hot = [self.last[a] for a in v.agents if a in self.last]
        self.target.append(
            Evaluation(
                ev.timestamp,
                v.state,
                condition=len(v.agents) >= v.required,
                evaluated=ev.evaluated,
                new_normal=ev.new_normal,
                value=_median(e.value for e in hot) if hot else ev.value,
                baseline=_median(e.baseline for e in hot) if hot else ev.baseline,
                value_text=ev.value_text,
                baseline_text=ev.baseline_text,
            )
        )
        own = ev if agent in v.vantage or ev.state == OK else replace(ev, state=OK, alarm_started=False)
        self.vantage.setdefault(agent, []).append(own)

    def final(self) -> Verdict:
        """Where the condition holds and where not, after this pass (also with no new evaluation)."""
        if self.verdict is None:
            self.verdict = verdict(self.states, self.probing, self.confirm, target_firing=self.target_firing)
        return self.verdict


def _median(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None
