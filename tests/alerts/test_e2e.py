"""End to end (issue 5's must-shows): the service probes the simulator, pages a receiver on loopback.

The service is `firsttoken run` in a subprocess, its config's `alerting:`
timings shortened (tests/alerts/service_proc.py). Probes go over
real HTTP to the session simulator; webhooks and PagerDuty events go over
real HTTP to receivers in this process.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import random
import re
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from monitor.agent.scheduler import next_grid_time_s, phase_offset_s
from monitor.storage import migrate
from monitor.storage.db import make_engine
from monitor.storage.models import Alert, NotificationOutbox
from monitor.storage.queries import insert_samples, recent_samples
from tests.pg import pg_url

from .helpers import sample
from .receiver import Receiver
from .service_proc import ServiceProcess

pytestmark = pytest.mark.slow

AGENT = "e2e"
INTERVAL_S = 0.5
SECRET = "e2e-webhook-secret-5f2c9a"
ROUTING_KEY = "e2eR0utingKey00000000000000000001"
PROMPT = {"messages": [{"role": "user", "content": "Explain TTFT in one sentence."}], "max_tokens": 8}
BEHAVIOUR = {"itl_ms": 2, "output_tokens": 5, "jitter": 0.05}


def write_config(path: Path, database: str, providers: dict, rules: list, notifiers: list, sim_url: str) -> Path:
    spec = {
        "database": database,
        "agent": AGENT,
        "defaults": {"interval": f"{INTERVAL_S}s", "timeout": "10s", "ttft_timeout": "5s"},
        "prompts": {"short": PROMPT},
        "providers": {
            name: {
                "protocol": "openai-chat",
                "api_key": "sk-e2e-test",
                "regions": {"local": sim_url + "/v1"},
                "models": models,
            }
            for name, models in providers.items()
        },
        "checks": [{"providers": list(providers), "prompts": ["short"]}],
        "alerts": rules,
        "notifiers": notifiers,
    }
    path.write_text(json.dumps(spec))
    return path


def rows(engine, table):
    with engine.connect() as conn:
        return [r._mapping for r in conn.execute(select(table.__table__).order_by(table.__table__.c.id))]


def seed_history(engine, target: str, ttft_ms: float, n: int = 80) -> None:
    """What a monitor that has been running a while has: a baseline for the regression rule."""
    rng = random.Random(target)
    now = datetime.now(UTC)
    start = now - timedelta(seconds=n * INTERVAL_S)
    values = [ttft_ms * rng.lognormvariate(0, BEHAVIOUR["jitter"]) for _ in range(n)]
    insert_samples(
        engine,
        [sample(target, start + timedelta(seconds=i * INTERVAL_S), v, agent=AGENT) for i, v in enumerate(values)],
    )


def sqlite_database(workdir: Path) -> tuple[str, object]:
    url = f"sqlite:///{workdir / 'firsttoken.db'}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    return url, engine


class Spiker:
    """Makes exactly one probe in every `every` of a target 10x slow: isolated spikes.

    The scheduler starts a target's probes on a fixed grid (its phase offset
    plus k intervals), so the spike is switched on just before one start and
    off just after it.
    """

    def __init__(self, simulator, model: str, target_id: str, normal_ms: float, every: int = 6) -> None:
        self.simulator, self.model, self.normal_ms, self.every = simulator, model, normal_ms, every
        self.offset_s = phase_offset_s(target_id, INTERVAL_S)
        self.spikes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every * INTERVAL_S):
            start = next_grid_time_s(time.time() + 0.3, INTERVAL_S, self.offset_s)
            time.sleep(max(0.0, start - 0.15 - time.time()))
            self.simulator.set_model(self.model, ttft_ms=self.normal_ms * 10)
            time.sleep(max(0.0, start + 0.15 - time.time()))
            self.simulator.set_model(self.model, ttft_ms=self.normal_ms)
            self.spikes += 1

    def __enter__(self) -> Spiker:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.simulator.set_model(self.model, ttft_ms=self.normal_ms)


def by_status(received, status: str):
    return [r for r in received if r.json().get("status") == status]


# --------------------------------------------------------------------------- (a), (c), (d)
GROUP_RULE = {  # every target; only the `grp` models go past it
    "name": "slow",
    "metric": "ttft_ms",
    "kind": "threshold",
    "percentile": 50,
    "above": 250,
    "window": "2s",
    "min_samples": 3,
    "for_evaluations": 2,
    "resolve_after": 2,
}
REGRESSION_RULE = {
    "name": "ttft-regression",
    "metric": "ttft_ms",
    "kind": "regression",
    "min_change": "50%",
    "baseline_window": "1h",
    "severity": "page",
    "match": {"provider": "reg-*"},
}


@pytest.fixture(scope="module")
def service_run(simulator, tmp_path_factory):
    """One service run (a service start is seconds of imports, so the scenarios share it):

    - reg-a: its model's TTFT doubles, then recovers (regression rule);
    - reg-b: its model has isolated 10x spikes all along;
    - grp: all three models of the provider's one region degrade together, then recover;
    - calm: stays as it is.
    """
    tag = uuid.uuid4().hex[:6]
    doubling, spiky, calm = f"e2e-{tag}-doubling", f"e2e-{tag}-spiky", f"e2e-{tag}-calm"
    group = [f"e2e-{tag}-g{i}" for i in range(3)]
    for model in (doubling, spiky):
        simulator.set_model(model, ttft_ms=100, **BEHAVIOUR)
    for model in (*group, calm):
        simulator.set_model(model, ttft_ms=60, **BEHAVIOUR)
    target_a, target_b = f"reg-a/{doubling}@local:short", f"reg-b/{spiky}@local:short"
    workdir = tmp_path_factory.mktemp("service")
    url, engine = sqlite_database(workdir)
    seed_history(engine, target_a, 100)
    seed_history(engine, target_b, 100)
    with Receiver() as hooks, Receiver(ok_status=202) as pd:
        notifiers = [
            {"name": "hooks", "type": "webhook", "url": hooks.url + "/alerts", "secret": "${E2E_WEBHOOK_SECRET}"},
            {"name": "oncall", "type": "pagerduty", "routing_key": "${E2E_PD_KEY}", "url": pd.url + "/v2/enqueue"},
            {"name": "log", "type": "log"},
        ]
        providers = {"reg-a": [doubling], "reg-b": [spiky], "grp": group, "calm": [calm]}
        rules = [REGRESSION_RULE, GROUP_RULE]
        config = write_config(workdir / "firsttoken.yaml", url, providers, rules, notifiers, simulator.base_url)
        env = {"E2E_WEBHOOK_SECRET": SECRET, "E2E_PD_KEY": ROUTING_KEY}
        alerting = {"group_wait": "2s"}

        def paged(provider: str, status: str):
            return lambda r: [b for b in by_status(r.accepted, status) if b.json()["scope"]["provider"] == provider]

        with (
            ServiceProcess(config, workdir, env=env, alerting=alerting) as service,
            Spiker(simulator, spiky, target_b, 100) as spiker,
        ):
            time.sleep(4)  # normal operation, spikes included
            simulator.set_model(doubling, ttft_ms=200)
            for model in group:
                simulator.set_model(model, ttft_ms=400)
            fired = hooks.wait_for(lambda r: paged("reg-a", "firing")(r) and paged("grp", "firing")(r), 40)
            time.sleep(3)  # past the 2 s grouping hold: a per-model page of grp would come now
            simulator.set_model(doubling, ttft_ms=100)
            for model in group:
                simulator.set_model(model, ttft_ms=60)
            resolved = fired and hooks.wait_for(
                lambda r: paged("reg-a", "resolved")(r) and paged("grp", "resolved")(r), 40
            )
            time.sleep(3)  # anything extra (a repeat, a straggler of grp) would arrive now
        log = service.log()
        assert fired and resolved, f"missing pages: {[r.json()['summary'] for r in hooks.requests]}\n{log[-6000:]}"
        yield {
            "hooks": list(hooks.requests),
            "pd": list(pd.requests),
            "log": log,
            "engine": engine,
            "targets": (target_a, target_b),
            "models": (doubling, spiky),
            "group": group,
            "spikes": spiker.spikes,
        }
    engine.dispose()


def bodies_for(run, provider: str) -> list[dict]:
    return [b for b in (r.json() for r in run["hooks"]) if b["scope"]["provider"] == provider]


def test_e2e_ttft_doubling_pages_once_and_resolves_once(service_run):
    doubling, _ = service_run["models"]
    assert all(200 <= r.status < 300 for r in service_run["hooks"])
    bodies = bodies_for(service_run, "reg-a")
    assert [b["status"] for b in bodies] == ["firing", "resolved"], bodies
    firing, resolved = bodies
    assert firing["alert_id"] == resolved["alert_id"] and firing["rule"] == "ttft-regression"
    assert firing["scope"] == {
        "provider": "reg-a",
        "model": doubling,
        "region": "local",
        "prompt": "short",
        "agent": None,
    }
    assert firing["metric"] == "ttft_ms" and firing["severity"] == "page"
    assert 85 <= firing["baseline"] <= 125, firing
    assert 1.6 <= firing["value"] / firing["baseline"] <= 2.5, firing
    assert firing["resolved_at"] is None and resolved["resolved_at"] is not None
    assert resolved["value"] < 1.3 * resolved["baseline"]
    for r in service_run["hooks"]:  # signed, verifiable by the receiver with the shared secret alone
        expected = hmac.new(SECRET.encode(), r.raw, hashlib.sha256).hexdigest()
        assert r.headers["x-firsttoken-signature"] == f"sha256={expected}"
        assert r.path == "/alerts"
    deliveries = [r.headers["x-firsttoken-delivery"] for r in service_run["hooks"]]
    assert len(set(deliveries)) == len(deliveries)


def test_e2e_isolated_spikes_page_nothing(service_run):
    _, target_b = service_run["targets"]
    assert bodies_for(service_run, "reg-b") == [] and bodies_for(service_run, "calm") == []
    assert not [a for a in rows(service_run["engine"], Alert) if a["provider"] in ("reg-b", "calm")]
    # The spikes did reach the detector, one at a time.
    since = datetime.now(UTC) - timedelta(minutes=5)
    live = [s for s in recent_samples(service_run["engine"], target_b, since=since) if s.sched_lag_ms is not None]
    measured = [s.ttft_ms for s in live if s.ok]
    spikes = [i for i, v in enumerate(measured) if v > 500]
    assert len(spikes) >= 3, measured
    assert all(b - a > 1 for a, b in itertools.pairwise(spikes)), measured


def test_e2e_a_whole_provider_region_degrading_is_one_provider_alert(service_run):
    bodies = bodies_for(service_run, "grp")
    assert [b["status"] for b in bodies] == ["firing", "resolved"], bodies
    for body in bodies:
        assert body["scope"] == {"provider": "grp", "model": None, "region": "local", "prompt": None, "agent": None}
        assert body["rule"] == "slow"
    assert re.search(r"\b[23] of 3 targets of grp in local", bodies[0]["summary"]), bodies[0]
    alerts = [a for a in rows(service_run["engine"], Alert) if a["provider"] == "grp"]
    members = [a for a in alerts if a["scope_kind"] == "target"]
    assert {a["model"] for a in members} == set(service_run["group"])  # recorded, inhibited, never paged
    assert all(a["last_notified_at"] is None for a in members)
    assert [a["scope_key"] for a in alerts if a["scope_kind"] == "provider_region"] == ["grp@local"]


def test_e2e_pagerduty_trigger_then_resolve_with_one_dedup_key(service_run):
    target_a, _ = service_run["targets"]
    events = [
        e for e in (r.json() for r in service_run["pd"]) if e["dedup_key"].startswith("firsttoken:ttft-regression:")
    ]
    assert [e["event_action"] for e in events] == ["trigger", "resolve"]
    trigger, resolve = events
    assert trigger["routing_key"] == resolve["routing_key"] == ROUTING_KEY
    assert trigger["dedup_key"] == resolve["dedup_key"] and target_a in trigger["dedup_key"]
    assert trigger["payload"]["source"] == target_a and trigger["payload"]["severity"] == "critical"
    assert trigger["payload"]["class"] == "ttft_ms" and trigger["payload"]["group"] == "reg-a@local"
    group_events = [e for e in (r.json() for r in service_run["pd"]) if e["dedup_key"].startswith("firsttoken:slow:")]
    assert [e["event_action"] for e in group_events] == ["trigger", "resolve"]
    assert all(r.path == "/v2/enqueue" for r in service_run["pd"])


def test_e2e_secrets_stay_out_of_logs_and_database(service_run):
    log = service_run["log"]
    assert "ALERT FIRING" in log and "ALERT RESOLVED" in log  # the log notifier
    assert SECRET not in log and ROUTING_KEY not in log
    stored = json.dumps([dict(r) for r in rows(service_run["engine"], NotificationOutbox)], default=str)
    assert SECRET not in stored and ROUTING_KEY not in stored


# --------------------------------------------------------------------------- (b)
@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_e2e_failing_receiver_and_a_restart_deliver_the_page_exactly_once(backend, simulator, tmp_path, request):
    model = f"e2e-{uuid.uuid4().hex[:6]}-slow"
    simulator.set_model(model, ttft_ms=300, **BEHAVIOUR)
    if backend == "sqlite":
        url, engine = sqlite_database(tmp_path)
    else:
        url = pg_url(request.getfixturevalue("pg_server").create_database())
        engine = make_engine(url)
        migrate.upgrade(engine)
    rule = {
        "name": "slow",
        "metric": "ttft_ms",
        "kind": "threshold",
        "percentile": 50,
        "above": 150,
        "window": "3s",
        "min_samples": 3,
        "for_evaluations": 2,
        "resolve_after": 2,
    }
    try:
        with Receiver(fail_first=3, fail_status=503) as hooks:
            notifiers = [{"name": "hooks", "type": "webhook", "url": hooks.url + "/alerts"}]
            config = write_config(
                tmp_path / "firsttoken.yaml", url, {"sim": [model]}, [rule], notifiers, simulator.base_url
            )
            service = ServiceProcess(config, tmp_path, alerting={"retry_after": "700ms"})
            service.start()
            try:
                assert hooks.wait_for(lambda r: len(r.requests) >= 1, 40), service.log()[-4000:]
                service.stop()  # restart in the middle of the retries
                assert hooks.accepted == []
                service.start()
                assert hooks.wait_for(lambda r: len(r.accepted) >= 1, 40), service.log()[-4000:]
                time.sleep(2.5)  # a duplicate, or a second page for the same alert, would arrive now
            finally:
                service.stop()
        assert len(hooks.accepted) == 1, service.log()[-4000:]
        assert len(hooks.requests) == 4  # three refused, one accepted
        assert {r.headers["x-firsttoken-delivery"] for r in hooks.requests} == {"1"}
        assert {r.json()["status"] for r in hooks.requests} == {"firing"}
        (alert,) = rows(engine, Alert)
        assert alert["state"] == "firing"
        (row,) = rows(engine, NotificationOutbox)
        assert row["status"] == "sent" and row["attempts"] == 4 and row["last_error"] is None
        assert service.log().count("--- start") == 2
    finally:
        engine.dispose()
