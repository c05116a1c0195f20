"""The scope one target's probes count towards, by the SLO's `per:` (DESIGN §12).

`target`: the target itself; `provider`: every matched target of the provider (all regions, models,
prompts); `model`: every matched target serving that canonical model (DESIGN §10); `all`: every
matched target. One budget and one burn-rate alert per scope.
"""

from __future__ import annotations

from dataclasses import dataclass

from monitor.sample import target_id


@dataclass(frozen=True, slots=True)
class SloScope:
    per: str
    provider: str | None = None
    model: str | None = None
    region: str | None = None
    prompt: str | None = None
    # An SLO alert is always the scope's, decided by the quorum of vantage points (DESIGN §11): never
    # one agent's. Kept so an SLO alert's row and body name no agent, as a target alert's do.
    agent: None = None

    @property
    def key(self) -> str:
        if self.per == "target":
            return target_id(self.provider, self.model, self.region, self.prompt)
        if self.per == "provider":
            return f"{self.provider}/*"
        if self.per == "model":
            return f"*/{self.model}"
        return "*"

    @property
    def kind(self) -> str:
        """The alerts table's `scope_kind` for an SLO alert: `slo_target`, `slo_provider` …"""
        return f"slo_{self.per}"

    def labels(self) -> dict[str, str | None]:
        return {"provider": self.provider, "model": self.model, "region": self.region, "prompt": self.prompt}


def scope_of(per: str, target) -> SloScope:
    """`target`: a config Target (or anything with provider/model/region/prompt and canonical_model)."""
    if per == "target":
        return SloScope(per, target.provider, target.model, target.region, target.prompt)
    if per == "provider":
        return SloScope(per, provider=target.provider)
    if per == "model":
        return SloScope(per, model=getattr(target, "canonical_model", "") or target.model)
    return SloScope("all")


def members(slo, targets) -> dict[str, tuple[SloScope, tuple[str, ...]]]:
    """scope key -> (scope, the ids of its matched targets), for one SLO over the configured targets."""
    out: dict[str, tuple[SloScope, list[str]]] = {}
    for t in targets:
        if slo.matches(t.provider, t.model, t.region, t.prompt):
            scope = scope_of(slo.per, t)
            out.setdefault(scope.key, (scope, []))[1].append(t.id)
    return {k: (scope, tuple(ids)) for k, (scope, ids) in sorted(out.items())}
