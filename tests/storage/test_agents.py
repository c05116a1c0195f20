from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import select

from monitor.storage.models import Target
from monitor.storage.queries import heartbeat_agent, insert_samples, list_agents, sync_targets
from monitor.storage.queries.targets import list_targets

from .factories import BASE_TIME, make_samples


@dataclass(frozen=True)
class ConfiguredTarget:
    id: str
    provider: str
    model: str
    region: str
    prompt: str
    protocol: str
    canonical_model: str = ""


def test_heartbeats_and_sample_times_are_listed(engine):
    insert_samples(engine, make_samples(3, agent="eu"))
    heartbeat_agent(engine, "eu", healthy=False, version="0.1.0", now=BASE_TIME + timedelta(minutes=1))
    heartbeat_agent(engine, "us", now=BASE_TIME)
    eu, us = list_agents(engine)
    assert (eu.name, eu.healthy, eu.version, eu.last_seen) == ("eu", False, "0.1.0", BASE_TIME + timedelta(minutes=1))
    assert eu.last_sample_at == BASE_TIME + timedelta(seconds=2)
    assert (us.name, us.healthy, us.last_sample_at) == ("us", True, None)


def test_sync_targets_records_protocols_and_keeps_seen_times(engine):
    samples = make_samples(2, targets=1)
    insert_samples(engine, samples)
    configured = [
        ConfiguredTarget(samples[0].target, "prov0", "model-0", "region", "short", "openai-chat"),
        ConfiguredTarget("new/m@r:p", "new", "m", "r", "p", "anthropic", "llama-70b"),
    ]
    sync_targets(engine, configured, now=BASE_TIME + timedelta(days=1))
    with engine.connect() as conn:
        rows = {r.id: r for r in conn.execute(select(Target.__table__))}
    assert rows[samples[0].target].protocol == "openai-chat"
    assert rows[samples[0].target].first_seen == samples[0].started_at
    assert rows["new/m@r:p"].protocol == "anthropic"
    # comparisons and routes group by the canonical name; without an `as:` it is the model id
    assert (rows["new/m@r:p"].canonical_model, rows[samples[0].target].canonical_model) == ("llama-70b", "model-0")
    refs = {t.id: t for t in list_targets(engine)}
    assert (refs["new/m@r:p"].canonical, refs[samples[0].target].canonical) == ("llama-70b", "model-0")
