"""`contract:` on a provider (DESIGN §17): what loads, and what is refused with one line naming where."""

from __future__ import annotations

import pytest

from tests.config_helpers import load, minimal, one_error


def with_contract(contract, **provider):
    data = minimal()
    (name,) = data["providers"]
    data["providers"][name] = {**data["providers"][name], "contract": contract, **provider}
    return data, name


def test_a_bedrock_style_contract_loads_with_its_tiers_highest_first():
    data, name = with_contract(
        {
            "uptime": {
                "minute_down": {"error_rate": "5%"},
                "credits": [{"below": "99.0%", "credit": "25%"}, {"below": "99.9%", "credit": "10%"},
                            {"below": "95.0%", "credit": "100%"}],
            },
            "latency": {"minute_ok": {"tps_at_least": 50}, "objective": "99%"},
            "claim_days": 30,
        }
    )  # fmt: skip
    (contract,) = load(data).providers[name].contracts
    assert [t.below for t in contract.uptime.credits] == [0.999, 0.99, 0.95]
    assert contract.uptime.committed == 0.999
    assert contract.uptime.minute_down.kinds == ("server_error", "timeout", "connect", "stream_error")
    # the tier reached is the lowest `below` the uptime is under; exactly the promise earns nothing
    assert contract.uptime.credit(0.999) is None
    assert contract.uptime.credit(0.9989).credit == 0.10
    assert contract.uptime.credit(0.985).credit == 0.25
    assert contract.uptime.credit(0.5).credit == 1.0
    assert contract.latency.minute_ok.ok(50.0) and not contract.latency.minute_ok.ok(49.9)


def test_contracts_per_model_and_region_are_named_by_their_match():
    data, name = with_contract([{"match": {"region": "r1"}, "uptime": {}}, {"name": "fast", "latency": {
        "minute_ok": {"ttft_at_most": "2s"}}}])  # fmt: skip
    data["providers"][name]["regions"] = {"r1": "http://127.0.0.1:9/v1"}
    first, second = load(data).providers[name].contracts
    assert first.label(name) == f"{name} region=r1" and first.covers("any-model", "r1")
    assert not first.covers("any-model", "r2")
    assert second.label(name) == "fast" and second.latency.minute_ok.ok(2000.0)


@pytest.mark.parametrize(
    ("contract", "message"),
    [
        ({}, "contract: a contract needs uptime, latency or both"),
        ({"latency": {"minute_ok": {}}}, "contract.latency.minute_ok: give exactly one of tps_at_least or ttft_at_most"),
        ({"uptime": {"minute_down": {"kinds": ["auth"]}}, "latency": None}, None),
        ({"uptime": {"minute_down": {"kinds": ["server_eror"]}}}, "contract.uptime.minute_down.kinds: unknown error kind 'server_eror'"),
        ({"uptime": {"credits": [{"below": "99%", "credit": "10%"}, {"below": "99%", "credit": "20%"}]}},
         "contract.uptime.credits: two tiers have the same `below`"),
        ({"uptime": {"credits": [{"below": 99.9, "credit": "10%"}]}}, "contract.uptime.credits[0].below: a bare number is a fraction"),
        ({"match": {"model": "nope"}, "uptime": {}}, "contract.match.model: the provider has no model 'nope'"),
        ({"match": {"prompt": "x"}, "uptime": {}}, "contract.match: a contract matches by model and region only, not 'prompt'"),
        ({"uptime": {}, "claim_days": 0}, "contract.claim_days:"),
    ],
)  # fmt: skip
def test_a_broken_contract_is_one_line_naming_where(contract, message):
    data, name = with_contract(contract)
    if message is None:  # counting auth errors against a provider is the user's call, and allowed
        assert load(data).providers[name].contracts[0].uptime.minute_down.kinds == ("auth",)
        return
    line = one_error(data)
    assert line.startswith(f"providers.{name}.") and message in line, line
