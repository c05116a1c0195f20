"""The pure parts: behaviours, `sim:` names, scenarios, schedules, token text, templates."""

from __future__ import annotations

import random
import statistics
from pathlib import Path

import pytest

from monitor.simulator.behaviour import FAULTS, BehaviourError, ModelBehaviour, parse_sim_name
from monitor.simulator.catalogue import DEFAULT_BEHAVIOUR, Catalogue, load_scenario
from monitor.simulator.plan import RANDOM_ERRORS, make_plan
from monitor.simulator.text import ANSWER_PIECES, token_text
from monitor.simulator.wire.base import Template, hole, prompt_chars


def test_sim_name_aliases_and_full_names() -> None:
    b = parse_sim_name("sim:ttft=150:itl=5:tokens=40:reasoning=20:chunk=3:usage=false:jitter=0.1")
    assert (b.ttft_ms, b.itl_ms, b.output_tokens, b.reasoning_tokens) == (150, 5, 40, 20)
    assert (b.tokens_per_chunk, b.usage, b.jitter) == (3, False, 0.1)
    b = parse_sim_name("sim:ttft_ms=50:fault=reset:fault_p=0.5:after=2:delay=10:errors=0.1:spike=0.2:spike_factor=3")
    assert (b.fault, b.fault_probability, b.fault_after_tokens, b.fault_delay_ms) == ("reset", 0.5, 2, 10)
    assert (b.error_rate, b.spike_probability, b.spike_factor) == (0.1, 0.2, 3)
    assert parse_sim_name("sim:") == ModelBehaviour()  # the deterministic defaults
    assert parse_sim_name("sim:prefill=40").prefill_ms_per_1k_tokens == 40


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("sim:ttft=1:bogus=2", "bogus"),
        ("sim:ttft", "needs a value"),
        ("sim:fault=explode", "explode"),
        ("sim:ttft=-5", "ttft_ms"),
        ("sim:tokens=2.5", "output_tokens"),
        ("sim:fault_p=2", "fault_probability"),
        ("sim:chunk=0", "tokens_per_chunk"),
        ("sim:usage=maybe", "usage"),
    ],
)
def test_sim_name_errors_say_what_is_wrong(name: str, fragment: str) -> None:
    with pytest.raises(BehaviourError, match=fragment):
        parse_sim_name(name)


def test_every_fault_is_accepted() -> None:
    for fault in FAULTS:
        assert parse_sim_name(f"sim:fault={fault}").fault == fault


def test_catalogue_lookup_and_upsert() -> None:
    catalogue = Catalogue()
    assert catalogue.behaviour_for("no-such-model") == DEFAULT_BEHAVIOUR
    assert catalogue.behaviour_for("gpt-4o-mini").ttft_ms == 350
    assert catalogue.behaviour_for("sim:ttft=7").ttft_ms == 7
    updated = catalogue.upsert("gpt-4o-mini", {"ttft_ms": 700})
    assert updated.ttft_ms == 700 and updated.itl_ms == 12  # merged over the built-in
    fresh = catalogue.upsert("brand-new", {"output_tokens": 3})
    assert fresh.output_tokens == 3 and fresh.ttft_ms == DEFAULT_BEHAVIOUR.ttft_ms
    with pytest.raises(BehaviourError, match="nope: unknown behaviour field"):
        catalogue.upsert("brand-new", {"nope": 1})
    with pytest.raises(BehaviourError):
        catalogue.upsert("sim:ttft=1", {})
    assert catalogue.remove("brand-new") and not catalogue.remove("brand-new")


def test_region_factors_accept_a_mapping() -> None:
    b = ModelBehaviour(region_factors={"eu": 2.0})
    assert b.region_factor("eu") == 2.0 and b.region_factor("us") == 1.0 and b.region_factor(None) == 1.0
    assert b.to_dict()["region_factors"] == {"eu": 2.0}
    hash(b)  # still a hashable value


def test_scenario_file(tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text("default: {ttft_ms: 99}\nmodels:\n  fast: {ttft_ms: 10, itl_ms: 1}\n  gpt-4o: {fault: reset}\n")
    catalogue = load_scenario(path)
    assert catalogue.behaviour_for("fast").ttft_ms == 10
    assert catalogue.behaviour_for("fast").output_tokens == DEFAULT_BEHAVIOUR.output_tokens
    assert catalogue.behaviour_for("gpt-4o").fault == "reset" and catalogue.behaviour_for("gpt-4o").itl_ms == 18
    assert catalogue.behaviour_for("unknown").ttft_ms == 99


def test_scenario_errors_are_reported_together(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("models:\n  a: {ttft_ms: -1}\n  b: {colour: red}\n  c: 5\nextra: 1\n")
    with pytest.raises(BehaviourError) as info:
        load_scenario(path)
    lines = str(info.value).splitlines()
    assert len(lines) == 4
    assert any("models.a.ttft_ms" in line for line in lines)
    assert any("models.b.colour: unknown behaviour field" in line for line in lines)
    assert any("models.c: expected a mapping" in line for line in lines)
    assert any("extra: unknown scenario key" in line for line in lines)


def test_plan_is_exact_without_jitter() -> None:
    b = ModelBehaviour(ttft_ms=100, itl_ms=10, output_tokens=5, reasoning_tokens=2, tokens_per_chunk=2)
    plan = make_plan(b, prompt_tokens=10, max_tokens=None, region=None, rng=random.Random(0))
    chunks = list(plan.chunks())
    assert [(c.offset_ns, c.reasoning, c.tokens, c.start) for c in chunks] == [
        (100_000_000, True, 2, 0),
        (120_000_000, False, 2, 0),
        (140_000_000, False, 2, 2),
        (150_000_000, False, 1, 4),
    ]
    assert plan.output_tokens == 7 and plan.finish == "stop" and plan.fault is None


def test_plan_prefill_region_and_cap() -> None:
    b = ModelBehaviour(
        ttft_ms=100, prefill_ms_per_1k_tokens=50, region_factors={"eu": 2.0}, output_tokens=10, reasoning_tokens=4
    )
    plan = make_plan(b, prompt_tokens=2000, max_tokens=6, region="eu", rng=random.Random(0))
    assert plan.ttft_ns == 400_000_000
    assert (plan.reasoning_tokens, plan.answer_tokens, plan.finish) == (4, 2, "length")


def test_plan_jitter_keeps_the_median() -> None:
    b = ModelBehaviour(ttft_ms=200, jitter=0.3, output_tokens=1)
    rng = random.Random(42)
    ttfts = [make_plan(b, 1, None, None, rng).ttft_ns / 1e6 for _ in range(4000)]
    assert 190 < statistics.median(ttfts) < 210
    assert statistics.mean(ttfts) > statistics.median(ttfts)  # the long tail is on the slow side


def test_plan_fault_probability_and_error_rate() -> None:
    rng = random.Random(7)
    b = ModelBehaviour(fault="reset", fault_probability=0.3)
    hits = sum(make_plan(b, 1, None, None, rng).fault == "reset" for _ in range(4000))
    assert 1000 < hits < 1400
    b = ModelBehaviour(error_rate=0.5)
    faults = [make_plan(b, 1, None, None, rng).fault for _ in range(3000)]
    assert set(faults) == {None, *RANDOM_ERRORS}
    assert 1300 < faults.count(None) < 1700


def test_plan_spikes() -> None:
    b = ModelBehaviour(ttft_ms=100, spike_probability=0.1, spike_factor=4)
    ttfts = [make_plan(b, 1, None, None, random.Random(i)).ttft_ns for i in range(2000)]
    assert set(ttfts) == {100_000_000, 400_000_000}
    assert 120 < ttfts.count(400_000_000) < 280


def test_empty_fault_plans_no_tokens() -> None:
    plan = make_plan(ModelBehaviour(fault="empty", reasoning_tokens=3), 1, None, None, random.Random(0))
    assert plan.output_tokens == 0 and list(plan.chunks()) == []


def test_token_text_cycles_readable_words() -> None:
    assert token_text(ANSWER_PIECES, 0, 4) == "The time to first"
    assert token_text(ANSWER_PIECES, 1, 1) == " time"
    n = len(ANSWER_PIECES)
    assert token_text(ANSWER_PIECES, n - 1, 2) == ". The"  # the paragraph wraps around


def test_template_render_and_bind() -> None:
    template = Template({"a": hole("x"), "b": [hole("y"), 1], "c": "plain"})
    assert template.render(x="é\n", y=2) == b'{"a":"\xc3\xa9\\n","b":[2,1],"c":"plain"}'
    assert template.bind(x=None).render(y="z") == b'{"a":null,"b":["z",1],"c":"plain"}'


def test_prompt_chars_skips_structure() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "abcd"}], "system": "xy", "stream": True}
    assert prompt_chars(body) == 6
