"""`firsttoken slo rules` (DESIGN §12) against Debian's promtool, and a real Prometheus evaluating them
against a real `firsttoken run`: when a route starts failing, Prometheus fires the same SLO alert
(ticket, then page) within one evaluation interval of firsttoken's own."""

from __future__ import annotations

import sqlite3
import subprocess
import time
from datetime import UTC, datetime

import httpx
import pytest
import yaml

from tests.integrations.conftest import FIRSTTOKEN, PrometheusServer, RunningService, need, wait_for

pytestmark = pytest.mark.integration
MODEL = "slo-flip"
EVALUATION_S = 5.0
SLOS = [
    # 6 h: the page pair is 30 s / 2.5 s, the ticket pair 12 m / 1 m, so a failing route trips both in seconds.
    {
        "name": "flip",
        "objective": "95%",
        "period": "6h",
        "match": {"model": MODEL},
        "good": {"ttft_ms": {"below": 1500}},
    },
    {
        "name": "fleet",
        "objective": "99.9%",
        "per": "provider",
        "good": {"ttft_ms": {"below": 1333}, "tps": {"above": 25}},
    },
]


def offline_config(tmp_path, models: list[str], slos: list[dict]):
    """A config of one simulated provider nobody probes: enough for `firsttoken slo rules`."""
    config = tmp_path / "firsttoken.yaml"
    sim = {"protocol": "openai-chat", "regions": {"r": "http://127.0.0.1:9/v1"}, "models": models}
    config.write_text(
        yaml.safe_dump(
            {
                "providers": {"sim": sim},
                "prompts": {"short": {"messages": [{"role": "user", "content": "hi"}]}},
                "checks": [{"providers": ["sim"], "prompts": ["short"]}],
                "slos": slos,
            }
        )
    )
    return config


def rules_text(config_path) -> str:
    done = subprocess.run(
        [*FIRSTTOKEN, "slo", "rules", "--config", str(config_path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_promtool_accepts_the_generated_rules(tmp_path):
    text = rules_text(offline_config(tmp_path, [MODEL, "b"], SLOS))
    # fleet's 1.333 s bound lies between histogram buckets: the agents judge it exactly instead.
    assert 'firsttoken_slo_probes_total{slo="fleet", good="false"}' in text and "_bucket" not in text
    rules = tmp_path / "slo.yml"
    rules.write_text(text)
    done = subprocess.run([need("promtool"), "check", "rules", str(rules)], capture_output=True, text=True)
    assert done.returncode == 0 and "SUCCESS: 18 rules found" in done.stdout, done.stdout + done.stderr
    document = yaml.safe_load(text)
    alerts = [r for g in document["groups"] for r in g["rules"] if "alert" in r]
    assert {(a["labels"]["slo"], a["labels"]["severity"]) for a in alerts} == {
        ("flip", "page"),
        ("flip", "ticket"),
        ("fleet", "page"),
        ("fleet", "ticket"),
    }


# Vantage points (DESIGN §11): three scopes of one SLO, probed once a minute by two or three agents.
# m1: one agent of two fails every probe (its own path): no quorum, no alert, though the pooled
# error ratio (50%) is 50x the budget's pace. m2: two agents of three fail: a quorum. m3: a single
# agent fails: it decides alone.
QUORUM_SLO = {"name": "vp", "objective": "99%", "period": "30d"}
FAILING = {"m1": {"a": True, "b": False}, "m2": {"a": True, "b": True, "c": False}, "m3": {"a": True}}


def quorum_unit_test(rules_file: str) -> dict:
    """A `promtool test rules` file: 3 hours of per-agent probe counters, the alerts expected at 2 h."""
    series = []
    for model, agents in FAILING.items():
        for agent, failing in agents.items():
            labels = f'slo="vp", provider="sim", model="{model}", region="r", prompt="short", agent="{agent}"'
            bad, good = ("0+1x180", "0+0x180") if failing else ("0+0x180", "0+1x180")
            series.append({"series": f'firsttoken_slo_probes_total{{{labels}, good="false"}}', "values": bad})
            series.append({"series": f'firsttoken_slo_probes_total{{{labels}, good="true"}}', "values": good})
    expected = []
    for model, agents in (("m2", 2), ("m3", 1)):
        for severity in ("page", "ticket"):
            expected.append(
                {
                    "exp_labels": {
                        "severity": severity,
                        "slo": "vp",
                        "provider": "sim",
                        "model": model,
                        "region": "r",
                        "prompt": "short",
                    },
                    "exp_annotations": {
                        "summary": f"SLO vp (99% over 30d) is burning its error budget fast enough to {severity}",
                        "description": f"Seen from {agents} vantage points (agents), more than half of those "
                        "that probed the scope.",
                    },
                }
            )
    return {
        "rule_files": [rules_file],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": series,
                "alert_rule_test": [{"eval_time": "2h", "alertname": "FirsttokenSloBurnRate", "exp_alerts": expected}],
            }
        ],
    }


def test_promtool_fires_only_on_a_quorum_of_vantage_points(tmp_path):
    """The generated rules keep `agent` and ask for more than half of the agents that probed a scope,
    as firsttoken's own SLO alerts do; promtool's rule unit tests evaluate them on per-agent series."""
    text = rules_text(offline_config(tmp_path, list(FAILING), [QUORUM_SLO]))
    assert "by (provider, model, region, prompt, agent)" in text  # never pooled over agents
    (tmp_path / "slo.yml").write_text(text)
    (tmp_path / "slo_test.yml").write_text(yaml.safe_dump(quorum_unit_test("slo.yml"), width=1000))
    done = subprocess.run(
        [need("promtool"), "test", "rules", "slo_test.yml"], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0 and "SUCCESS" in done.stdout, done.stdout + done.stderr


def prometheus_alerts(prom: PrometheusServer) -> dict[str, float]:
    """severity -> activeAt of the firing FirsttokenSloBurnRate alerts of SLO flip."""
    body = httpx.get(prom.url + "/api/v1/alerts", timeout=5).json()
    out = {}
    for alert in body["data"]["alerts"]:
        labels = alert["labels"]
        if (
            labels.get("alertname") == "FirsttokenSloBurnRate"
            and labels.get("slo") == "flip"
            and alert["state"] == "firing"
        ):
            out[labels["severity"]] = datetime.fromisoformat(alert["activeAt"].replace("Z", "+00:00")).timestamp()
    return out


def firsttoken_alert(db) -> tuple[float, str, float | None] | None:
    """(fired_at, severity, when the escalation to page was queued) of the SLO alert, if any."""
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT id, fired_at, severity FROM alerts WHERE slo = 'flip'").fetchone()
        if row is None:
            return None
        escalated = conn.execute(
            "SELECT min(created_at) FROM notification_outbox WHERE alert_id = ? AND event = 'repeat'", (row[0],)
        ).fetchone()[0]
    return _utc(row[1]), row[2], None if escalated is None else _utc(escalated)


def _utc(text: str) -> float:
    """SQLite keeps naive UTC text (monitor.storage.models.UTCDateTime)."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


@pytest.mark.slow
def test_a_real_prometheus_fires_with_firsttoken(tmp_path_factory, simulator, otlp_receiver):
    simulator.set_model(MODEL, ttft_ms=100.0, itl_ms=2.0, output_tokens=4, fault=None)
    extra = {
        "providers": {
            "sim": {
                "protocol": "openai-chat",
                "api_key": "sk-slo-test",
                "regions": {"local": simulator.base_url + "/v1"},
                "models": [MODEL],
            }
        },
        "alerts": [],
        "slos": SLOS[:1],
    }
    service = RunningService(tmp_path_factory.mktemp("slo-run"), simulator, otlp_receiver.port, extra_config=extra)
    try:
        prom = PrometheusServer(
            tmp_path_factory.mktemp("slo-prom"),
            f"127.0.0.1:{service.port}",
            extra_rules={"slo.yml": rules_text(service.config)},
            evaluation_interval=f"{EVALUATION_S:g}s",
        )
        try:
            time.sleep(40)  # a healthy stretch fills the windows with good probes
            assert firsttoken_alert(service.db) is None and prometheus_alerts(prom) == {}
            simulator.set_model(MODEL, fault="server_error")
            assert wait_for(
                lambda: len(prometheus_alerts(prom)) == 2 and (firsttoken_alert(service.db) or (0, "", None))[2],
                120,
                0.5,
            )
            ours = firsttoken_alert(service.db)
            theirs = prometheus_alerts(prom)
            print(
                f"prometheus - firsttoken: ticket {theirs['ticket'] - ours[0]:+.1f} s, page {theirs['page'] - ours[2]:+.1f} s"
            )
            assert ours[1] == "page"
            assert abs(theirs["ticket"] - ours[0]) <= EVALUATION_S, (theirs, ours)
            assert abs(theirs["page"] - ours[2]) <= EVALUATION_S, (theirs, ours)
        finally:
            prom.stop()
    finally:
        simulator.set_model(MODEL, fault=None)
        service.stop()
