"""The quorum of vantage points and the verdicts it gives (DESIGN §11), pure."""

from __future__ import annotations

import pytest

from monitor.alerts.attribution import attribute, split_sample
from monitor.alerts.quorum import agent_wide, required_agents, seen_from_text, verdict
from monitor.config.vantage import Confirm

from .conftest import make_config
from .helpers import config_spec


@pytest.mark.parametrize(
    ("probing", "needed"),
    [(0, 1), (1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (6, 4)],
)
def test_default_is_more_than_half_and_at_least_two_of_two_or_more(probing, needed):
    assert required_agents(None, probing) == needed


def test_confirm_agents_and_share():
    assert required_agents(Confirm(agents=1), 3) == 1
    assert required_agents(Confirm(agents=3), 2) == 2  # never more than probed
    assert required_agents(Confirm(share=0.5), 2) == 1
    assert required_agents(Confirm(share=0.5), 3) == 2
    assert required_agents(Confirm(share=1.0), 4) == 4
    assert required_agents(Confirm(agents=3), 1) == 1  # one agent is its own quorum


def test_verdicts():
    states = {"a": "ok", "b": "firing", "c": "ok"}
    v = verdict(states, ["a", "b", "c"], None)
    assert (v.state, v.agents, v.agents_clear, v.vantage) == ("ok", ("b",), ("a", "c"), ("b",))
    v = verdict({**states, "a": "firing"}, ["a", "b", "c"], None)
    assert (v.state, v.agents, v.vantage) == ("firing", ("a", "b"), ())
    v = verdict({**states, "a": "pending"}, ["a", "b", "c"], None)
    assert v.state == "pending" and v.vantage == ()
    # A departed agent has no say, whatever its detector remembers.
    assert verdict({"a": "ok", "gone": "firing"}, ["a"], None).state == "ok"
    # A firing target stays while any agent still sees it: no tail of vantage alerts as agents recover.
    assert verdict(states, ["a", "b", "c"], None, target_firing=True).state == "firing"


def test_agent_wide_needs_two_providers():
    assert agent_wide({"b": ["p", "q"], "c": ["p", "p"]}) == {"b"}


def test_seen_from_text():
    assert seen_from_text(["eu-west"], ["us-east", "ap-south"]) == "seen from eu-west only; us-east and ap-south normal"
    assert seen_from_text(["a", "b"], []) == "seen from a and b"


def test_attribution_splits_path_and_provider():
    before = [(float(t), *split_sample(700.0, 150.0, None)) for t in range(20)]
    path = [(float(t), *split_sample(1600.0, 1050.0, None)) for t in range(20, 25)]
    provider = [(float(t), *split_sample(1200.0, 150.0, None)) for t in range(20, 25)]
    assert attribute(before + path, 20.0) == {"network_ms": 900.0, "provider_ms": 0.0, "dominant": "network"}
    assert attribute(before + provider, 20.0) == {"network_ms": 0.0, "provider_ms": 500.0, "dominant": "provider"}
    # openai-processing-ms: the provider's share of the time to headers is the provider's.
    assert split_sample(900.0, 400.0, 300.0) == (100.0, 800.0)
    assert attribute(before[:5] + path, 20.0) is None  # too little before the change to say


def test_confirm_and_vantage_severity_load_from_config(tmp_path):
    rule = {"name": "r", "metric": "ttft_ms", "kind": "regression", "confirm": {"share": "50%"}}
    cfg = make_config(config_spec(rules=[{**rule, "vantage_severity": "warning"}]), tmp_path)
    assert cfg.alerts[0].confirm == Confirm(share=0.5) and cfg.alerts[0].vantage_severity == "warning"
    assert make_config(config_spec(rules=[rule | {"confirm": None}]), tmp_path).alerts[0].vantage_severity == "ticket"


@pytest.mark.parametrize("confirm", [{}, {"agents": 2, "share": "50%"}, {"agents": 0}, {"quorum": 2}])
def test_bad_confirm_is_one_clear_error(tmp_path, confirm):
    from monitor.config import ConfigError

    rule = {"name": "r", "metric": "ttft_ms", "kind": "regression", "confirm": confirm}
    with pytest.raises(ConfigError) as exc:
        make_config(config_spec(rules=[rule]), tmp_path)
    assert "confirm" in str(exc.value)
