"""Histories for the status site's tests: samples per agent, rolled up, and alerts as the engine stores them."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

from sqlalchemy import insert

from monitor.config import load_config_text
from monitor.sample import Sample
from monitor.storage.models import Alert
from monitor.storage.queries import insert_samples
from monitor.storage.rollups import hour_floor, rollup_hours

AGENTS = ("agent-eu", "agent-us", "agent-ap")


def config(tmp_path, *, site: dict | None = None, models=("fast", "slow"), providers=("acme", "other"), **extra):
    """Two providers of two models each, one region, one prompt; `status_site:` as given."""
    spec = {
        "providers": {
            p: {"protocol": "openai-chat", "regions": {"r1": "http://127.0.0.1:9/v1"}, "models": list(models)}
            for p in providers
        },
        "prompts": {"short": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}},
        "checks": [{"providers": list(providers), "prompts": ["short"]}],
        **({"status_site": site} if site else {}),
        **extra,
    }
    return load_config_text(json.dumps(spec), base_dir=tmp_path, env={})


Outcome = Callable[[str, str, datetime], bool]  # (target id, agent, minute) -> ok?


def probe_minutes(
    engine,
    targets: Iterable,
    start: datetime,
    end: datetime,
    *,
    ok: Outcome = lambda target, agent, at: True,
    ttft: Callable[[str, str, datetime], float] = lambda target, agent, at: 400.0,
    agents: Iterable[str] = AGENTS,
    every: timedelta = timedelta(minutes=1),
    rollup: bool = True,
) -> int:
    """One probe per `every` from each agent to each target over [start, end), then the rollups."""
    rows, at = [], start
    agents = tuple(agents)
    while at < end:
        for t in targets:
            for agent in agents:
                good = ok(t.id, agent, at)
                rows.append(
                    Sample(
                        target=t.id, provider=t.provider, model=t.model, region=t.region, prompt=t.prompt,
                        started_at=at + timedelta(seconds=5), ok=good, error_kind=None if good else "server_error",
                        ttft_ms=ttft(t.id, agent, at) if good else None, agent=agent,
                    )
                )  # fmt: skip
        at += every
    for i in range(0, len(rows), 20_000):
        insert_samples(engine, rows[i : i + 20_000])
    if rollup:
        rollup_hours(engine, hour_floor(start), end + timedelta(hours=1), now=end + timedelta(hours=2))
    return len(rows)


def add_alert(engine, *, scope_kind: str, provider: str | None, model: str | None = None, agent: str | None = None,
              metric: str = "error_rate", state: str = "firing", at: datetime, **extra) -> int:  # fmt: skip
    """An alert row as the engine writes it: `scope_kind` target | provider_region | vantage | agent."""
    key = {
        "agent": f"agent:{agent}",
        "vantage": f"{provider}/{model}@r1:short~{agent}",
        "provider_region": f"{provider}@r1",
    }.get(scope_kind, f"{provider}/{model}@r1:short")
    values = dict(
        rule="errors", scope_kind=scope_kind, scope_key=key, provider=provider, model=model,
        region="r1" if provider else None, prompt="short" if model else None, state=state, severity="page",
        metric=metric, value=0.9, baseline=0.0, started_at=at, fired_at=at,
        resolved_at=at + timedelta(minutes=20) if state == "resolved" else None,
        summary=f"errors: error_rate of {key} is 90% — seen from {agent or 'eu, us'}", agent=agent,
    )  # fmt: skip
    values.update(extra)
    with engine.begin() as conn:
        return int(conn.execute(insert(Alert).values(**values).returning(Alert.id)).scalar_one())
