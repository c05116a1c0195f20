"""What an alert is about (DESIGN §5, §11): a target, a whole provider in one region, or, below the
quorum of vantage points, a target as seen from one agent, or one agent's path as a whole.

A scope's `key` is what the `alerts` table indexes on together with the rule:
the target id for a target, `provider@region` for a provider-region group,
`target~agent` for a vantage alert, `agent:NAME` for an agent-wide alert.
"""

from __future__ import annotations

from dataclasses import dataclass

from monitor.sample import target_id

TARGET, PROVIDER_REGION, VANTAGE, AGENT = "target", "provider_region", "vantage", "agent"
VANTAGE_KINDS = (VANTAGE, AGENT)


@dataclass(frozen=True, slots=True)
class Scope:
    provider: str | None
    region: str | None
    model: str | None = None  # None: the scope is the whole provider in this region (or an agent's path)
    prompt: str | None = None
    agent: str | None = None  # set: the alert is about what one vantage point sees, below the quorum

    @classmethod
    def of_target(cls, target) -> Scope:
        """From anything with provider/model/region/prompt (a config Target, a TargetKey, a Sample)."""
        return cls(provider=target.provider, region=target.region, model=target.model, prompt=target.prompt)

    @classmethod
    def of_agent(cls, agent: str) -> Scope:
        return cls(provider=None, region=None, agent=agent)

    def seen_from(self, agent: str) -> Scope:
        """This target as seen from one vantage point."""
        return Scope(self.provider, self.region, self.model, self.prompt, agent)

    @property
    def kind(self) -> str:
        if self.agent is not None:
            return VANTAGE if self.model is not None else AGENT
        return TARGET if self.model is not None else PROVIDER_REGION

    @property
    def target_key(self) -> str:
        return target_id(self.provider, self.model, self.region, self.prompt)

    @property
    def key(self) -> str:
        kind = self.kind
        if kind == AGENT:
            return f"agent:{self.agent}"
        if kind == VANTAGE:
            return f"{self.target_key}~{self.agent}"
        if kind == PROVIDER_REGION:
            return self.group_key
        return self.target_key

    @property
    def group_key(self) -> str:
        """The provider-region group this scope belongs to (its own key for a group scope)."""
        return f"{self.provider}@{self.region}"

    def group(self) -> Scope:
        return Scope(provider=self.provider, region=self.region)

    def labels(self) -> dict[str, str | None]:
        """The webhook body's `scope`: null where the scope is wider; `agent` null unless below quorum."""
        return {
            "provider": self.provider,
            "model": self.model,
            "region": self.region,
            "prompt": self.prompt,
            "agent": self.agent,
        }
