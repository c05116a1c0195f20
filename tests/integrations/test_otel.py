"""OpenTelemetry export of a real `firsttoken run`, decoded by an OTLP/HTTP receiver on loopback."""

from __future__ import annotations

import sqlite3

import pytest

from monitor.agent.otel import DURATION_BUCKETS_S, LATEST, TOKEN_BUCKETS, V1_41, attributes, names_for
from monitor.sample import Sample
from tests.integrations.conftest import AGENT, BROKEN, FAST, SLOW, wait_for

pytestmark = pytest.mark.integration


def _value(any_value):
    return getattr(any_value, any_value.WhichOneof("value"))


def latest_metrics(receiver) -> tuple[dict, dict]:
    """(resource attributes, name -> Metric) of the newest export (cumulative: it holds everything)."""
    for request in reversed(receiver.requests):
        for rm in request.resource_metrics:
            metrics = {m.name: m for sm in rm.scope_metrics for m in sm.metrics}
            if V1_41.duration in metrics:
                resource = {a.key: _value(a.value) for a in rm.resource.attributes}
                return resource, metrics
    return {}, {}


def points(metric) -> list[tuple[dict, object]]:
    data = metric.histogram if metric.WhichOneof("data") == "histogram" else metric.sum
    return [({a.key: _value(a.value) for a in p.attributes}, p) for p in data.data_points]


def by_model(metric, model: str, **extra) -> list:
    return [
        p
        for attrs, p in points(metric)
        if attrs["gen_ai.request.model"] == model and all(attrs.get(k) == v for k, v in extra.items())
    ]


def stored_ok(db, model: str) -> list[float]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT ttft_ms FROM samples WHERE model = ? AND ok = 1", (model,)).fetchall()
    return [r[0] for r in rows]


def test_genai_histograms_reach_an_otlp_receiver(running, otlp_receiver, simulator):
    n = V1_41
    wanted = {n.duration, n.ttfc, n.tpoc, n.token_usage}
    assert wait_for(
        lambda: (
            wanted <= set(latest_metrics(otlp_receiver)[1])
            and len(by_model(latest_metrics(otlp_receiver)[1][n.ttfc], FAST)) == 1
            and by_model(latest_metrics(otlp_receiver)[1][n.ttfc], FAST)[0].count >= 3
        ),
        40,
    ), running.output()
    assert set(otlp_receiver.paths) == {"/v1/metrics"}  # the SDK appended the signal path to the base endpoint

    resource, metrics = latest_metrics(otlp_receiver)
    # OTEL_RESOURCE_ATTRIBUTES merged by the SDK, service.name ours.
    assert resource["deployment.environment.name"] == "ci" and resource["team"] == "llm-sre"
    assert resource["service.name"] == "firsttoken"

    units = {name: metrics[name].unit for name in wanted}
    assert units == {n.duration: "s", n.ttfc: "s", n.tpoc: "s", n.token_usage: "{token}"}
    for name in (n.duration, n.ttfc, n.tpoc):
        assert tuple(points(metrics[name])[0][1].explicit_bounds) == DURATION_BUCKETS_S
    assert tuple(points(metrics[n.token_usage])[0][1].explicit_bounds) == TOKEN_BUCKETS

    (fast_attrs, fast_ttfc) = next((a, p) for a, p in points(metrics[n.ttfc]) if a["gen_ai.request.model"] == FAST)
    assert fast_attrs == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",  # from the openai-chat protocol
        "gen_ai.request.model": FAST,
        "gen_ai.response.model": fast_attrs["gen_ai.response.model"],
        "server.address": "127.0.0.1",
        "server.port": simulator.port,
        "firsttoken.provider": "sim",
        "firsttoken.region": "local",
        "firsttoken.prompt": "short",
        "firsttoken.agent": AGENT,
    }
    assert fast_attrs["gen_ai.response.model"]  # what the simulator's response named
    assert "error.type" not in fast_attrs

    # Values: the simulator's TTFT (jitter 0), and the same probes the database holds.
    mean_fast = fast_ttfc.sum / fast_ttfc.count
    (slow_ttfc,) = by_model(metrics[n.ttfc], SLOW)
    assert 0.12 <= mean_fast < 0.25 and 0.32 <= slow_ttfc.sum / slow_ttfc.count < 0.45
    assert fast_ttfc.min >= 0.12
    stored = stored_ok(running.db, FAST)
    assert abs(len(stored) - fast_ttfc.count) <= 3
    assert mean_fast == pytest.approx(sum(stored) / len(stored) / 1000, rel=0.1)

    # A failing model: duration carries error.type, no TTFT, no chunk times, no tokens.
    (broken,) = [a for a, _ in points(metrics[n.duration]) if a["gen_ai.request.model"] == BROKEN]
    assert broken["error.type"] == "server_error"
    assert by_model(metrics[n.ttfc], BROKEN) == [] and by_model(metrics[n.token_usage], BROKEN) == []

    # Tokens by gen_ai.token.type; chunk times: one per chunk after the first.
    (out,) = by_model(metrics[n.token_usage], FAST, **{"gen_ai.token.type": "output"})
    assert out.sum / out.count == 8
    (inp,) = by_model(metrics[n.token_usage], FAST, **{"gen_ai.token.type": "input"})
    assert inp.sum > 0
    (tpoc,) = by_model(metrics[n.tpoc], FAST)
    assert tpoc.count >= fast_ttfc.count and 0 < tpoc.sum / tpoc.count < 0.05


def test_opt_in_switches_to_the_latest_development_names():
    assert names_for({}) is V1_41
    assert names_for({"OTEL_SEMCONV_STABILITY_OPT_IN": "http, gen_ai_latest_experimental"}) is LATEST
    assert LATEST.duration == "gen_ai.client.inference.duration" and LATEST.token_usage is None


def test_attributes_without_a_known_target_still_name_the_model():
    from datetime import UTC, datetime

    sample = Sample(
        target="x/m@r:p", provider="x", model="m", region="r", prompt="p", started_at=datetime.now(UTC), ok=False
    )
    attrs = attributes(sample, None)
    assert attrs["gen_ai.provider.name"] == "_OTHER" and attrs["error.type"] == "_OTHER"
