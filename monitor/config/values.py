"""The loaded configuration as the monitor reads it: the sections of the file, and the expanded matrix."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from monitor.config.fields import empty
from monitor.config.inhibit import DEFAULT_INHIBIT, InhibitRule
from monitor.config.notifiers import NotifierConfig
from monitor.config.prompts import Prompt, Reasoning
from monitor.config.reports import ReportEntry
from monitor.config.schema import (
    DEFAULT_DATABASE_URL,
    Alerting,
    AlertRule,
    Budget,
    Check,
    Defaults,
    Price,
    Provider,
    Retention,
    Silence,
)
from monitor.config.slos import Slo
from monitor.config.status_site import MaintenanceWindow, Smtp, StatusSite
from monitor.sample import TargetKey


@dataclass(frozen=True, slots=True)
class Target:
    """One cell of the matrix, with every setting resolved (check > provider > defaults)."""

    key: TargetKey
    protocol: str
    base_url: str
    prompt_spec: Prompt
    interval_s: float
    timeout_s: float
    ttft_timeout_s: float
    cache_bust: bool = True
    api_key: str | None = field(default=None, repr=False)
    headers: Mapping[str, str] = field(default_factory=empty, repr=False, hash=False)
    params: Mapping[str, Any] = field(default_factory=empty, hash=False)
    options: Mapping[str, Any] = field(default_factory=empty, hash=False)
    agents: tuple[str, ...] = ()  # empty = every agent
    canonical_model: str = ""  # the provider's `as:` name for the model, else its id
    reasoning: Reasoning | None = None  # the prompt's, else the provider's
    proxy: str | None = field(default=None, repr=False, hash=False)  # the provider's `proxy:`; None: the environment

    @property
    def id(self) -> str:
        return self.key.id

    @property
    def provider(self) -> str:
        return self.key.provider

    @property
    def model(self) -> str:
        return self.key.model

    @property
    def region(self) -> str:
        return self.key.region

    @property
    def prompt(self) -> str:
        return self.key.prompt

    @property
    def max_tokens(self) -> int:
        return self.prompt_spec.max_tokens

    def runs_on(self, agent: str) -> bool:
        return not self.agents or agent in self.agents


@dataclass(frozen=True, slots=True)
class Config:
    database_url: str = DEFAULT_DATABASE_URL
    agent: str = "local"
    defaults: Defaults = field(default_factory=Defaults)
    prompts: Mapping[str, Prompt] = field(default_factory=empty, hash=False)
    providers: Mapping[str, Provider] = field(default_factory=empty, hash=False)
    checks: tuple[Check, ...] = ()
    targets: tuple[Target, ...] = ()  # the expanded matrix, sorted by id
    alerts: tuple[AlertRule, ...] = ()
    notifiers: tuple[NotifierConfig, ...] = ()
    silences: tuple[Silence, ...] = ()
    prices: Mapping[str, Price] = field(default_factory=empty, hash=False)  # "provider/model" -> Price
    retention: Retention = field(default_factory=Retention)
    alerting: Alerting = field(default_factory=Alerting)
    dashboard_url: str | None = None
    public_url: str | None = None  # DESIGN §18: where `run --listen` is reached (signed alert links)
    budget: Budget | None = None
    slos: tuple[Slo, ...] = ()
    inhibit: tuple[InhibitRule, ...] = DEFAULT_INHIBIT  # DESIGN §15
    status_site: StatusSite = field(default_factory=StatusSite)  # DESIGN §16
    smtp: Smtp | None = None
    maintenance: tuple[MaintenanceWindow, ...] = ()
    reports: tuple[ReportEntry, ...] = ()
    secrets: frozenset[str] = field(default=frozenset(), repr=False)
    source_path: Path | None = None
    # `secrets="defer"`: "providers.openai.api_key" -> ("OPENAI_API_KEY",), credentials left unresolved
    unset_secrets: Mapping[str, tuple[str, ...]] = field(default_factory=empty, hash=False)

    def targets_for_agent(self, agent: str | None = None) -> tuple[Target, ...]:
        """The targets this agent probes: those with no `agents:` or naming it."""
        name = self.agent if agent is None else agent
        return tuple(t for t in self.targets if t.runs_on(name))

    def target(self, target_id: str) -> Target | None:
        return next((t for t in self.targets if t.id == target_id), None)

    def price(self, provider: str, model: str) -> Price | None:
        return self.prices.get(f"{provider}/{model}")
