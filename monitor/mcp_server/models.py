"""The MCP tools' typed outputs: the SDK publishes them as each tool's output schema. Pure.

A route is the object of `firsttoken routes --json`, field for field; `extra="allow"`
keeps any field the ranking grows later, so the tool never lags behind the command.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class TtftMs(BaseModel):
    p50: float | None
    p90: float | None
    p99: float | None


class P50(BaseModel):
    p50: float | None


class Route(BaseModel):
    model_config = ConfigDict(extra="allow")

    model: str = Field(description="canonical model name")
    prompt: str
    rank: int = Field(description="1 is the best route of its model and prompt")
    target: str = Field(description="provider/model@region:prompt")
    provider: str
    provider_model: str = Field(description="the provider's own id for the model")
    region: str
    served_by: str | None = Field(description="the upstream the newest response named")
    ttft_ms: TtftMs = Field(description="time to first token, milliseconds")
    tps: P50 = Field(description="decode speed, tokens per second")
    availability: float | None = Field(description="ok / measured probes over the window, 0-1")
    samples: int
    above_floor: bool = Field(description="availability at or above min_availability")
    fallbacks: int | None
    cost_per_1k_probes_usd: float | None


class BestRoutes(BaseModel):
    window: str
    min_availability: float
    by: str
    agent: str | None = Field(description="the vantage point the ranking was measured from; null: every agent")
    routes: list[Route] = Field(description="the rows of `firsttoken routes --json`, in the same order")


class ModelStatus(BaseModel):
    model: str
    status: str = Field(
        description="operational | under_maintenance | degraded_performance | partial_outage | major_outage"
    )


class Incident(BaseModel):
    id: int
    rule: str
    model: str | None
    title: str
    started_at: str


class ProviderStatus(BaseModel):
    provider: str
    status: str = Field(
        description="operational | under_maintenance | degraded_performance | partial_outage | major_outage"
    )
    ttft_p50_ms: float | None = Field(description="p50 TTFT over the status window (15 minutes)")
    models: list[ModelStatus]
    incidents: list[Incident] = Field(description="firing incidents on this provider")


class AlertScope(BaseModel):
    provider: str | None
    model: str | None
    region: str | None
    prompt: str | None


class Alert(BaseModel):
    id: int
    rule: str
    severity: str
    state: str = Field(description="pending | firing | resolved")
    metric: str
    scope: AlertScope
    value: float | str | None
    baseline: float | str | None
    started_at: str
    fired_at: str | None
    resolved_at: str | None
    summary: str
    silenced: bool


class RecentAlerts(BaseModel):
    since: str
    alerts: list[Alert] = Field(description="newest first")


class SloScope(BaseModel):
    """One SLO scope's row of `firsttoken slo --json` (DESIGN §12), field for field."""

    model_config = ConfigDict(extra="allow")

    slo: str
    scope: dict[str, str | None] = Field(
        description="the scope's labels (provider, model, region, prompt; null where it spans them) and `per`"
    )
    objective: float = Field(description="the share of good probes the period must hold, 0-1")
    period: str
    probes: int
    good: int
    attainment: float | None = Field(description="good / probes over the period, 0-1")
    budget_remaining: float | None = Field(
        description="1 - bad / the whole period's error budget (estimated at the pace seen while the data is "
        "younger than the period): 1 untouched, negative once spent"
    )
    burn_rates: dict[str, float | None] = Field(description="burn rate over each long alert window")
    exhausts_at: str | None = Field(description="when the budget runs out at the recent pace, if it will")
    exhausted: bool


class SloStatus(BaseModel):
    scopes: list[SloScope] = Field(description="the rows of `firsttoken slo --json`, in the same order")
