"""The one message model of Slack, Teams and email (monitor.alerts.message), pure: body in, words out."""

from __future__ import annotations

from datetime import timedelta

from monitor.alerts.message import DASHBOARD, RUNBOOK, SILENCE, message_of, scope_text
from monitor.alerts.payload import build_body, with_alternative
from monitor.alerts.records import AlertRecord
from monitor.alerts.scope import Scope
from monitor.alerts.signing import AlertLinks
from monitor.palette import RESOLVED_COLOR, SEVERITY_COLORS

from .helpers import T0

LINKS = AlertLinks("https://ft.example:9464", b"k" * 32)
RUNBOOK_URL = "https://runbooks.example/ttft"


def record(**kw) -> AlertRecord:
    values = dict(
        rule="ttft-regression",
        scope=Scope(provider="openai", region="us-east", model="gpt-4o", prompt="short"),
        state="firing",
        severity="page",
        metric="ttft_ms",
        started_at=T0,
        fired_at=T0 + timedelta(minutes=2),
        value=968.0,
        baseline=412.0,
        agents=("us-east", "eu-west"),
        agents_clear=("ap-south",),
        attribution={"network_ms": 14.0, "provider_ms": 542.0, "dominant": "provider"},
        summary="ttft-regression: ttft_ms of openai/gpt-4o@us-east:short is 968 ms, baseline 412 ms (+135%)",
    )
    return AlertRecord(**(values | kw))


def body(event="firing", **kw):
    made = build_body(record(**kw), event, 42, "https://dash.example", runbook=RUNBOOK_URL, links=LINKS, now=T0)
    return with_alternative(
        made,
        {"provider": "groq", "model": "llama", "region": "global", "ttft_ms": {"p50": 310.0}, "availability": 1.0},
    )


def facts(message) -> dict[str, str]:
    return {f.label: f.value for f in message.facts}


def test_a_firing_page_says_everything_on_call_acts_on():
    message = message_of(body())
    assert message.title == "PAGE · ttft-regression firing on openai/gpt-4o@us-east:short"
    assert message.color == SEVERITY_COLORS["page"] and message.status == "firing"
    assert facts(message) == {
        "Scope": "openai/gpt-4o@us-east:short",
        "Seen from": "us-east and eu-west",
        "Normal from": "ap-south",
        "Network or provider": "Mostly the provider (+14 ms network, +542 ms provider)",
        "Baseline → now": "ttft_ms: 412 ms → 968 ms (+135%)",
        "Started": "2025-06-01 12:00 UTC",
        "Alternative route": "groq/llama@global: p50 310 ms, 100%",
    }
    assert [link.label for link in message.links] == [DASHBOARD, SILENCE, RUNBOOK]
    assert message.links[0].url.startswith("https://dash.example/target?")
    assert message.links[1].url.startswith("https://ft.example:9464/alerts/42/silence?exp=")
    assert message.links[2].url == RUNBOOK_URL
    assert message.chart_url.startswith("https://ft.example:9464/alerts/42/chart.png?exp=")
    assert "one line per vantage point" in message.chart_alt
    assert message.footer == "firsttoken alert #42 · rule ttft-regression · started 2025-06-01 12:00 UTC"


def test_a_resolved_alert_says_how_long_it_lasted_and_its_worst():
    done = body(
        "resolved", state="resolved", resolved_at=T0 + timedelta(hours=1, minutes=5), value=420.0,
        fired_value=901.0, worst_value=1250.0,
    )  # fmt: skip
    message = message_of(done)
    assert message.title == "RESOLVED · ttft-regression on openai/gpt-4o@us-east:short"
    assert message.color == RESOLVED_COLOR and message.resolved
    said = facts(message)
    assert said["Lasted"] == "1 h 05 min (2025-06-01 12:00 UTC to 2025-06-01 13:05 UTC)"
    assert said["Worst"] == "1,250 ms (fired at 901 ms)"
    assert said["Baseline → resolved at"] == "ttft_ms: 412 ms → 420 ms (+2%)"
    assert "Started" not in said
    # Nothing left to silence; the dashboard, the runbook and the chart stay.
    assert [link.label for link in message.links] == [DASHBOARD, RUNBOOK] and message.chart_url


def test_scopes_in_words():
    def of(**scope):
        return scope_text({"scope": {"provider": None, "model": None, "region": None, "prompt": None} | scope})

    assert of(provider="bedrock", region="eu-west-1") == "bedrock in eu-west-1 (every model)"
    assert of(agent="eu-west") == "the path of agent eu-west (every target it probes)"
    assert of(provider="p", model="m", region="r", prompt="x", agent="a1") == "p/m@r:x, seen from a1"
    assert of(provider="openai") == "openai (every model and region)"
    assert of(model="gpt-4o") == "model gpt-4o on every provider"
    assert of() == "every target"


def test_an_agent_wide_alert_has_no_silence_link_and_a_ticket_is_amber():
    agent_wide = build_body(
        record(scope=Scope.of_agent("eu-west"), severity="ticket"), "firing", 7, None, links=LINKS, now=T0
    )
    message = message_of(agent_wide)
    assert agent_wide["silence_url"] is None and agent_wide["chart_url"]
    assert message.color == SEVERITY_COLORS["ticket"] and message.title.startswith("TICKET · ")
    assert [link.label for link in message.links] == []


def test_slo_and_change_alerts_say_their_own_values():
    slo = body(rule="slo:chat", slo="chat", metric="burn_rate", value=14.4, baseline=14.4, burn_window="1h/5m",
               budget_remaining=0.62)  # fmt: skip
    said = facts(message_of(slo))
    assert said["Burn rate"] == "burn 14.40x over 1h/5m (pages at 14.40x)"
    assert said["Error budget left"] == "62%"
    change = body(metric="served_by", value=None, baseline=None, value_text="b-7", baseline_text="a-3")
    assert facts(message_of(change))["Changed"] == "a-3 → b-7"


def test_no_alternative_up_is_said():
    made = with_alternative(build_body(record(), "firing", 1, None), None)
    assert facts(message_of(made))["Alternative route"] == "no other route is up"
    group = build_body(record(scope=Scope(provider="p", region="r")), "firing", 2, None)
    assert "Alternative route" not in facts(message_of(group))  # not a route: nothing to offer


def test_rules_and_slos_carry_their_runbook_into_the_body(tmp_path):
    from monitor.alerts.store import runbooks_of

    from .conftest import make_config
    from .helpers import config_spec

    spec = config_spec()
    spec["alerts"][0]["runbook"] = "https://runbooks.example/slow"
    spec["alerts"].append({"name": "errors", "metric": "error_rate", "kind": "threshold", "above": "20%"})
    spec["slos"] = [{"name": "chat", "objective": "99%", "runbook": "https://runbooks.example/slo-chat"}]
    config = make_config(spec, tmp_path)
    assert runbooks_of(config) == {
        "slow": "https://runbooks.example/slow",
        "slo:chat": "https://runbooks.example/slo-chat",
    }
    slo = build_body(record(rule="slo:chat", slo="chat"), "firing", 3, None, runbook=runbooks_of(config)["slo:chat"])
    assert [link.label for link in message_of(slo).links] == [RUNBOOK]
