"""The targets the service knows: `TargetRef` values and the one query that lists them."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine, func, select

from monitor.storage.models import Target


@dataclass(frozen=True)
class TargetRef:
    id: str
    provider: str
    model: str
    region: str
    prompt: str
    canonical_model: str = ""  # the config's `as:` name; "" reads as the model id

    @property
    def canonical(self) -> str:
        """The name comparisons and routes group by (DESIGN §10)."""
        return self.canonical_model or self.model

    def label(self, split_by: str) -> str:
        if split_by == "provider/model":
            return f"{self.provider}/{self.model}"
        if split_by == "target":
            return self.id
        if split_by == "all":
            return "all selected"
        if split_by == "agent":  # a line per vantage point: the samples say which, not the target
            return "every agent"
        return getattr(self, split_by)


def list_targets(engine: Engine) -> list[TargetRef]:
    """Every target the service has recorded (configured or seen in samples), by id."""
    t = Target.__table__.c
    canonical = func.coalesce(t.canonical_model, t.model)
    query = select(t.id, t.provider, t.model, t.region, t.prompt, canonical).order_by(t.id)
    with engine.connect() as conn:
        return [TargetRef(*row) for row in conn.execute(query).all()]
