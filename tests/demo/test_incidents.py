"""The demo's incident schedule and the time-varying behaviour source built on it (pure)."""

from __future__ import annotations

import pytest

from monitor.demo.cast import MODELS, PROVIDERS
from monitor.demo.incidents import HOUR_S, MINUTE_S, DemoSource, Incident, demo_peak_s, diurnal_factor, schedule

EPOCH_S = 1_780_000_000.0


@pytest.mark.parametrize("history_s", [3 * HOUR_S, 6 * HOUR_S, 24 * HOUR_S, 7 * 24 * HOUR_S])
def test_history_incidents_fit_the_history_and_leave_room_to_resolve(history_s):
    incidents = schedule(EPOCH_S, history_s)
    past = [i for i in incidents if i.start_s < EPOCH_S]
    live = [i for i in incidents if i.start_s >= EPOCH_S]
    assert len(past) == 5 and len(live) == 3
    for incident in past:
        assert EPOCH_S - history_s <= incident.start_s < incident.end_s
        # A quarter of the history at least stays clear after each: alerts resolve before the live period.
        assert incident.end_s <= EPOCH_S - 0.1 * history_s, incident.name
        assert incident.end_s - incident.start_s >= min(0.15 * history_s, 30 * MINUTE_S)
    # A day spreads them out at their full length.
    if history_s == 24 * HOUR_S:
        lengths = {i.name: i.end_s - i.start_s for i in past}
        assert lengths["sim-anthropic eu-west degraded"] == 90 * MINUTE_S
        assert lengths["gemini-2.5-flash rate limited"] == 45 * MINUTE_S
    for incident in live:
        assert EPOCH_S < incident.start_s < incident.end_s <= EPOCH_S + HOUR_S


def test_every_incident_names_a_cast_provider_model_and_region():
    providers = {p.name: p for p in PROVIDERS}
    for incident in schedule(EPOCH_S, 24 * HOUR_S):
        provider = providers[incident.provider]
        assert set(incident.models) <= set(provider.models)
        assert set(incident.regions) <= set(provider.regions)


def test_quiet_times_are_the_cast_times_the_daily_cycle():
    source = DemoSource(schedule(EPOCH_S, 24 * HOUR_S))
    quiet_s = EPOCH_S - 23 * HOUR_S
    b = source.behaviour_for("gpt-4o", "us-east", quiet_s)
    assert b.ttft_ms == pytest.approx(MODELS["gpt-4o"].ttft_ms * diurnal_factor(quiet_s))
    assert b.error_rate == 0 and b.fault is None
    assert b.region_factor("eu-west") == MODELS["gpt-4o"].region_factor("eu-west")


def test_diurnal_cycle_peaks_in_the_us_afternoon_within_ten_percent():
    day_start = 1_780_012_800.0  # 00:00 UTC
    factors = {h: diurnal_factor(day_start + h * HOUR_S) for h in range(24)}
    assert max(factors, key=factors.get) == 18
    assert min(factors.values()) == pytest.approx(0.9) and max(factors.values()) == pytest.approx(1.1)


def test_the_demos_day_is_placed_from_its_epoch_and_its_live_incidents_from_its_start():
    later = EPOCH_S + 3 * 24 * HOUR_S + 7 * HOUR_S  # another day, another time of day: the same history
    for epoch_s in (EPOCH_S, later):
        source = DemoSource((), peak_s=demo_peak_s(epoch_s))
        ttft = [source.behaviour_for("gpt-4o", "us-east", epoch_s - h * HOUR_S).ttft_ms for h in range(24)]
        assert max(range(24), key=ttft.__getitem__) == 6  # busiest six hours before the history ends
    live_s = EPOCH_S + 90
    live = [i for i in schedule(EPOCH_S, 24 * HOUR_S, live_s) if i.start_s >= EPOCH_S]
    assert len(live) == 3 and min(i.start_s for i in live) == live_s + 3 * MINUTE_S


def incident(name: str) -> Incident:
    return next(i for i in schedule(EPOCH_S, 24 * HOUR_S) if i.name == name)


def test_region_degradation_hits_every_model_of_that_provider_region_only():
    degraded = incident("sim-anthropic eu-west degraded")
    source = DemoSource([degraded], diurnal_amplitude=0)
    during = degraded.start_s + 60
    for model in ("claude-haiku-4-5", "claude-sonnet-4-5"):
        b = source.behaviour_for(model, "eu-west", during)
        assert b.ttft_ms == pytest.approx(MODELS[model].ttft_ms * 3.5)
        assert b.prefill_ms_per_1k_tokens == pytest.approx(MODELS[model].prefill_ms_per_1k_tokens * 3.5)
        assert b.itl_ms == pytest.approx(MODELS[model].itl_ms * 1.6)
        assert b.error_rate == pytest.approx(0.08)
        assert source.behaviour_for(model, "us-east", during) == MODELS[model]
        assert source.behaviour_for(model, "eu-west", degraded.end_s) == MODELS[model]
    assert source.behaviour_for("gpt-4o", "eu-west", during) == MODELS["gpt-4o"]


def test_rate_limiting_answers_a_share_of_one_model_with_429():
    limited = incident("gemini-2.5-flash rate limited")
    source = DemoSource([limited], diurnal_amplitude=0)
    b = source.behaviour_for("gemini-2.5-flash", "us-central1", limited.start_s)
    assert (b.fault, b.fault_probability) == ("rate_limited", 0.65)
    assert source.behaviour_for("gemini-2.5-pro", "us-central1", limited.start_s).fault is None


def test_slow_regression_ramps_up_then_holds_until_rolled_back():
    slow = incident("gpt-4o slow regression")
    source = DemoSource([slow], diurnal_amplitude=0)
    base = MODELS["gpt-4o"].ttft_ms

    def factor(t_s: float) -> float:
        return source.behaviour_for("gpt-4o", "us-east", t_s).ttft_ms / base

    ramp_end = slow.start_s + slow.ramp_s
    assert factor(slow.start_s) == pytest.approx(1.0)
    assert factor(slow.start_s + slow.ramp_s / 2) == pytest.approx(1.6)
    assert factor(ramp_end) == pytest.approx(2.2) == factor(slow.end_s - 1)
    assert factor(slow.end_s) == pytest.approx(1.0)
    assert factor(ramp_end) > factor(ramp_end - 600) > factor(ramp_end - 1200)


def test_unknown_and_sim_models_pass_through_the_catalogue():
    source = DemoSource(schedule(EPOCH_S, HOUR_S))
    assert source.behaviour_for("sim:ttft=5", None, EPOCH_S).ttft_ms == 5
    assert source.behaviour_for("someone-elses-model", None, EPOCH_S) == source.catalogue.default


def test_the_gateway_falls_back_to_a_slower_upstream_live_and_eu_west_becomes_the_better_route():
    fallback = incident("live: sim-router falls back in us-east")
    source = DemoSource([fallback], diurnal_amplitude=0)
    base = MODELS["llama-3.1-70b"]
    before = source.behaviour_for("llama-3.1-70b", "us-east", fallback.start_s - 1)
    during = source.behaviour_for("llama-3.1-70b", "us-east", fallback.start_s + 60)
    other = source.behaviour_for("llama-3.1-70b", "eu-west", fallback.start_s + 60)
    assert (before.gateway, before.served_by, before.fingerprint) == ("openrouter", "Groq", "fp_groq_b1")
    assert (during.served_by, during.fingerprint) == ("Together", "fp_together_7")
    assert other.served_by == "Groq"
    # us-east was the faster route; during the fallback it is slower than eu-west: the ranking flips
    assert base.ttft_ms < base.ttft_ms * base.region_factor("eu-west") < during.ttft_ms


def test_the_cache_incident_breaks_sim_openai_prompt_cache_only_while_it_lasts():
    lost = incident("sim-openai prompt cache stops hitting")
    source = DemoSource(schedule(EPOCH_S, 24 * HOUR_S))
    during = (lost.start_s + lost.end_s) / 2
    assert source.behaviour_for("gpt-4o-mini", "us-east", during).prompt_cache is False
    assert source.behaviour_for("gpt-4o-mini", "us-east", lost.end_s + 60).prompt_cache is True
    assert source.behaviour_for("claude-sonnet-4-5", "us-east", during).prompt_cache is True
