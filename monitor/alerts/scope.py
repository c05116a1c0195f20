"""What an alert is about: one target, or a whole provider in one region (DESIGN §5).

A scope's `key` is what the `alerts` table indexes on together with the rule:
the target id for a target, `provider@region` for a provider-region group.
"""

from __future__ import annotations

from dataclasses import dataclass

from monitor.sample import target_id

TARGET, PROVIDER_REGION = "target", "provider_region"


@dataclass(frozen=True, slots=True)
class Scope:
    provider: str
    region: str
    model: str | None = None  # None: the scope is the whole provider in this region
    prompt: str | None = None

    @classmethod
    def of_target(cls, target) -> Scope:
        """From anything with provider/model/region/prompt (a config Target, a TargetKey, a Sample)."""
        return cls(provider=target.provider, region=target.region, model=target.model, prompt=target.prompt)

    @property
    def kind(self) -> str:
        return TARGET if self.model is not None else PROVIDER_REGION

    @property
    def key(self) -> str:
        if self.model is None:
            return self.group_key
        return target_id(self.provider, self.model, self.region, self.prompt)

    @property
    def group_key(self) -> str:
        """The provider-region group this scope belongs to (its own key for a group scope)."""
        return f"{self.provider}@{self.region}"

    def group(self) -> Scope:
        return Scope(provider=self.provider, region=self.region)

    def labels(self) -> dict[str, str | None]:
        """The webhook body's `scope`: null where the scope is wider."""
        return {"provider": self.provider, "model": self.model, "region": self.region, "prompt": self.prompt}
