"""Every probe judged against each SLO in /metrics (`firsttoken_slo_probes_total`), and the
`firsttoken slo rules` built on it: exact for any bound, with no histogram bucket to round to."""

from __future__ import annotations

from datetime import UTC, datetime

from prometheus_client.parser import text_string_to_metric_families

from monitor.agent.metrics import ProbeMetrics
from monitor.config import load_config_text
from monitor.sample import Sample
from monitor.slo.prom_rules import slo_rules

CONFIG = """
providers:
  sim:
    protocol: openai-chat
    regions: {local: "http://127.0.0.1:1/v1"}
    models: [fast, slow]
prompts:
  short: {messages: [{role: user, content: hi}], max_tokens: 8}
checks:
  - {providers: [sim], prompts: [short]}
slos:
  - name: snappy
    match: {model: fast}
    objective: 99%
    good: {ttft_ms: {below: 1234ms}}
  - name: answers
    objective: 99.9%
    per: provider
"""


def sample(model: str, ok: bool = True, ttft_ms: float | None = 500.0, error_kind: str | None = None) -> Sample:
    return Sample(
        target=f"sim/{model}@local:short", provider="sim", model=model, region="local", prompt="short",
        started_at=datetime.now(UTC), ok=ok, ttft_ms=ttft_ms, total_ms=ttft_ms, agent="a", error_kind=error_kind,
    )  # fmt: skip


def counts(metrics: ProbeMetrics) -> dict[tuple[str, str, str], float]:
    families = {f.name: f for f in text_string_to_metric_families(metrics.exposition().decode())}
    return {
        (s.labels["slo"], s.labels["model"], s.labels["good"]): s.value
        for s in families["firsttoken_slo_probes"].samples
        if s.name == "firsttoken_slo_probes_total"
    }


def test_each_probe_is_judged_against_the_slos_that_match_its_target():
    config = load_config_text(CONFIG, env={})
    metrics = ProbeMetrics()
    metrics.set_slos(config.slos)
    metrics.observe(sample("fast", ttft_ms=1233.9))  # under the bound: good, though no bucket ends there
    metrics.observe(sample("fast", ttft_ms=1234.0))  # the bound is strict: bad
    metrics.observe(sample("fast", ok=False, ttft_ms=None, error_kind="http_5xx"))
    metrics.observe(sample("fast", ok=False, ttft_ms=None, error_kind="cancelled"))  # measured nothing
    metrics.observe(sample("slow", ttft_ms=9000.0))  # not snappy's; answered, so good for `answers`
    assert counts(metrics) == {
        ("snappy", "fast", "true"): 1,
        ("snappy", "fast", "false"): 2,
        ("answers", "fast", "true"): 2,
        ("answers", "fast", "false"): 1,
        ("answers", "slow", "true"): 1,
    }


def test_a_reloaded_config_judges_by_its_own_slos():
    metrics = ProbeMetrics()
    metrics.observe(sample("fast"))  # no SLOs yet: nothing judged
    metrics.set_slos(load_config_text(CONFIG, env={}).slos)
    metrics.observe(sample("fast"))
    assert counts(metrics)[("snappy", "fast", "true")] == 1


def test_the_rules_read_the_judged_probes_by_each_slos_scope():
    document = slo_rules(load_config_text(CONFIG, env={}).slos)
    snappy, answers = document["groups"]
    first = snappy["rules"][0]
    assert first["record"] == "firsttoken_slo:error_ratio:rate5m"
    assert 'firsttoken_slo_probes_total{slo="snappy", good="false"}[5m]' in first["expr"]
    # Per scope and per agent: the quorum of vantage points is taken in the alerts, never pooled here.
    assert "by (provider, model, region, prompt, agent)" in first["expr"]
    assert "by (provider, agent)" in answers["rules"][0]["expr"]
    page = next(r for r in snappy["rules"] if r.get("labels", {}).get("severity") == "page")
    assert "count by (slo, provider, model, region, prompt) (" in page["expr"] and " / 2)" in page["expr"]
    assert "_bucket" not in str(document)
