"""The config surface added for issues 12, 15 and 16: canonical models, status pages, reasoning,
sampling, tools, structured output, synthetic prompts, answer checks, cached prices, budgets,
change alerts and the Alertmanager notifier."""

from __future__ import annotations

import json

import pytest

from monitor.config import (
    CHANGE_METRICS,
    AlertmanagerConfig,
    Budget,
    Expect,
    Price,
    Reasoning,
    ResponseFormat,
    Synthetic,
    ToolExpect,
)
from tests.config_helpers import errors, load, minimal, one_error

TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}


def _prompt(**fields) -> dict:
    data = minimal()
    data["prompts"]["short"].update(fields)
    return data


def _provider(**fields) -> dict:
    data = minimal()
    data["providers"]["sim"].update(fields)
    return data


# --------------------------------------------------------- provider models
def test_models_with_canonical_names():
    data = _provider(models=["fast", {"name": "acme.fast-v2:0", "as": "fast-v2"}, {"name": "plain"}])
    config = load(data)
    provider = config.providers["sim"]
    assert provider.models == ("fast", "acme.fast-v2:0", "plain")
    assert dict(provider.canonical) == {"fast": "fast", "acme.fast-v2:0": "fast-v2", "plain": "plain"}
    by_model = {t.model: t for t in config.targets}
    assert by_model["acme.fast-v2:0"].canonical_model == "fast-v2"
    assert by_model["fast"].canonical_model == "fast"
    assert by_model["acme.fast-v2:0"].id == "sim/acme.fast-v2:0@local:short"  # ids keep the provider's id


@pytest.mark.parametrize(
    ("models", "expected"),
    [
        ([{"as": "x"}], "providers.sim.models[0].name: required"),
        ([{"name": "a", "alias": "x"}], "providers.sim.models[0].alias: unknown key"),
        ([{"name": "a b"}], "providers.sim.models[0].name: invalid model name 'a b': no spaces"),
        ([{"name": "a", "as": "b c"}], "providers.sim.models[0].as: invalid model name 'b c': no spaces"),
        (["a", {"name": "a", "as": "x"}], "providers.sim.models[1]: duplicate 'a'"),
        ([5], "providers.sim.models[0]: expected a string, got a number"),
    ],
)
def test_model_entry_errors(models, expected):
    assert one_error(_provider(models=models)) == expected


def test_status_page():
    url = "https://status.example.com/api/v2/summary.json"
    assert load(_provider(status_page=url)).providers["sim"].status_page == url
    assert load(minimal()).providers["sim"].status_page is None
    assert one_error(_provider(status_page="status.example.com")).startswith("providers.sim.status_page: not a URL")


# --------------------------------------------------------------- reasoning
def test_reasoning_on_provider_and_prompt_prompt_wins():
    data = _provider(reasoning={"effort": "low"})
    data["prompts"]["deep"] = {"messages": [{"role": "user", "content": "x"}], "reasoning": {"budget_tokens": 2048}}
    data["checks"][0]["prompts"] = ["short", "deep"]
    config = load(data)
    assert config.providers["sim"].reasoning == Reasoning(effort="low")
    assert config.prompts["deep"].reasoning == Reasoning(budget_tokens=2048)
    by_prompt = {t.prompt: t for t in config.targets}
    assert by_prompt["short"].reasoning == Reasoning(effort="low", budget_tokens=None)
    assert by_prompt["deep"].reasoning == Reasoning(effort=None, budget_tokens=2048)
    assert load(minimal()).targets[0].reasoning is None


@pytest.mark.parametrize(
    ("reasoning", "expected"),
    [
        ({}, "prompts.short.reasoning: give exactly one of effort or budget_tokens"),
        (
            {"effort": "low", "budget_tokens": 10},
            "prompts.short.reasoning: give exactly one of effort or budget_tokens",
        ),
        ({"effort": "max"}, "prompts.short.reasoning.effort: unknown effort 'max'; expected one of low, medium, high"),
        ({"budget_tokens": 0}, "prompts.short.reasoning.budget_tokens: must be at least 1 and at most 1,000,000"),
        ({"budget_tokens": 1.5}, "prompts.short.reasoning.budget_tokens: expected a whole number"),
        ({"efort": "low"}, "prompts.short.reasoning.efort: unknown key (did you mean 'effort'?)"),
        ("high", "prompts.short.reasoning: expected a mapping, got a string"),
    ],
)
def test_reasoning_errors(reasoning, expected):
    assert expected in errors(_prompt(reasoning=reasoning))


def test_provider_reasoning_error_path():
    assert one_error(_provider(reasoning={"effort": "hi"})).startswith("providers.sim.reasoning.effort: ")


# ------------------------------------------------- temperature and tools
def test_temperature():
    assert load(_prompt(temperature=0)).prompts["short"].temperature == 0.0
    assert isinstance(load(_prompt(temperature=1)).prompts["short"].temperature, float)
    assert load(minimal()).prompts["short"].temperature is None
    assert one_error(_prompt(temperature=2.5)) == "prompts.short.temperature: must be at least 0 and at most 2"
    assert one_error(_prompt(temperature="hot")) == "prompts.short.temperature: expected a number, got a string"


def test_tools_and_tool_choice():
    second = {"type": "function", "function": {"name": "lookup", "description": "find a thing"}}
    prompt = load(_prompt(tools=[TOOL, second], tool_choice={"name": "lookup"})).prompts["short"]
    assert [t["function"]["name"] for t in prompt.tools] == ["get_weather", "lookup"]
    assert prompt.tools[0] == TOOL and prompt.tools[1]["function"]["description"] == "find a thing"
    assert json.loads(json.dumps(list(prompt.tools))) == [TOOL, second]  # goes into request bodies as is
    assert dict(prompt.tool_choice) == {"name": "lookup"}
    with pytest.raises(TypeError):
        prompt.tools[0]["type"] = "x"  # type: ignore[index]
    for choice in ("auto", "none", "required"):
        assert load(_prompt(tools=[TOOL], tool_choice=choice)).prompts["short"].tool_choice == choice
    assert load(minimal()).prompts["short"].tools == () and load(minimal()).prompts["short"].tool_choice is None


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"tools": [{"type": "web", "function": {"name": "f"}}]}, "prompts.short.tools[0].type: unknown type 'web'; expected one of function"),
        ({"tools": [{"type": "function"}]}, "prompts.short.tools[0].function: required"),
        ({"tools": [{"type": "function", "function": {}}]}, "prompts.short.tools[0].function.name: required"),
        ({"tools": [{"type": "function", "function": {"name": "a b"}}]},
         "prompts.short.tools[0].function.name: invalid name 'a b': letters, digits, '_' or '-', at most 64"),
        ({"tools": [TOOL, TOOL]}, "prompts.short.tools[1].function.name: duplicate tool 'get_weather'"),
        ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "objekt"}}}]},
         "prompts.short.tools[0].function.parameters: not a valid JSON Schema at type: "),
        ({"tools": [{"type": "function", "function": {"name": "f", "params": {}}}]},
         "prompts.short.tools[0].function.params: unknown key (did you mean 'parameters'?)"),
        ({"tools": []}, "prompts.short.tools: must not be empty"),
        ({"tool_choice": "auto"}, "prompts.short.tool_choice: the prompt has no tools"),
        ({"tools": [TOOL], "tool_choice": "always"},
         "prompts.short.tool_choice: expected one of auto, none, required or {name: <tool>}, got 'always'"),
        ({"tools": [TOOL], "tool_choice": {"name": "get_wether"}},
         "prompts.short.tool_choice: unknown tool 'get_wether' (did you mean 'get_weather'?)"),
    ],
)  # fmt: skip
def test_tool_errors(fields, expected):
    assert one_error(_prompt(**fields)).startswith(expected)


# ------------------------------------------------------ response_format
def test_response_format():
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    prompt = load(_prompt(response_format={"json_schema": schema})).prompts["short"]
    assert prompt.response_format == ResponseFormat(json_schema=schema, name="answer", strict=True)
    prompt = load(_prompt(response_format={"json_schema": schema, "name": "reply", "strict": False})).prompts["short"]
    assert (prompt.response_format.name, prompt.response_format.strict) == ("reply", False)
    assert load(minimal()).prompts["short"].response_format is None


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        ({}, "prompts.short.response_format.json_schema: required"),
        ({"json_schema": {"type": 5}}, "prompts.short.response_format.json_schema: not a valid JSON Schema at type:"),
        ({"json_schema": "object"}, "prompts.short.response_format.json_schema: expected a JSON Schema (a mapping), got a string"),
        ({"json_schema": {}, "strict": "yes"}, "prompts.short.response_format.strict: expected true or false, got a string"),
        ({"json_schema": {}, "name": "my answer"}, "prompts.short.response_format.name: invalid name 'my answer'"),
        ({"schema": {}}, "prompts.short.response_format.schema: unknown key (did you mean 'json_schema'?)"),
    ],
)  # fmt: skip
def test_response_format_errors(fmt, expected):
    assert expected in errors(_prompt(response_format=fmt))[0]


# -------------------------------------------------------------- synthetic
def test_synthetic_prompt_gets_a_default_question():
    data = minimal()
    data["prompts"]["long"] = {"synthetic": {"tokens": 32000}}
    data["prompts"]["seeded"] = {
        "synthetic": {"tokens": 100, "seed": 7},
        "messages": [{"role": "user", "content": "q?"}],
    }
    config = load(data)
    long = config.prompts["long"]
    assert long.synthetic == Synthetic(tokens=32000, seed=0)
    assert len(long.messages) == 1 and long.messages[0].role == "user" and long.messages[0].content.strip()
    seeded = config.prompts["seeded"]
    assert seeded.synthetic == Synthetic(tokens=100, seed=7) and seeded.messages[0].content == "q?"
    assert load(minimal()).prompts["short"].synthetic is None


@pytest.mark.parametrize(
    ("synthetic", "expected"),
    [
        ({}, "prompts.long.synthetic.tokens: required"),
        ({"tokens": 0}, "prompts.long.synthetic.tokens: must be at least 1 and at most 200,000"),
        ({"tokens": 200_001}, "prompts.long.synthetic.tokens: must be at least 1 and at most 200,000"),
        ({"tokens": 10, "seed": "x"}, "prompts.long.synthetic.seed: expected a whole number, got a string"),
        ({"tokens": 10, "sed": 1}, "prompts.long.synthetic.sed: unknown key (did you mean 'seed'?)"),
        (500, "prompts.long.synthetic: expected a mapping, got a number"),
    ],
)
def test_synthetic_errors(synthetic, expected):
    data = minimal()
    data["prompts"]["long"] = {"synthetic": synthetic}
    assert expected in errors(data)


# ----------------------------------------------------------------- expect
def test_expect_every_check():
    expect = {"contains": "Paris", "not_contains": ["London", "Berlin"], "regex": r"^\w+", "max_chars": 200,
              "min_tokens": 2, "json_schema": {"type": "object"}, "tool": "get_weather"}  # fmt: skip
    prompt = load(_prompt(tools=[TOOL], expect=expect)).prompts["short"]
    assert prompt.expect == Expect(contains=("Paris",), not_contains=("London", "Berlin"), regex=r"^\w+",
                                   json_schema={"type": "object"}, tool=ToolExpect("get_weather"),
                                   max_chars=200, min_tokens=2)  # fmt: skip
    with_args = {"tool": {"name": "get_weather", "arguments": {"type": "object", "required": ["city"]}}}
    tool = load(_prompt(tools=[TOOL], expect=with_args)).prompts["short"].expect.tool
    assert tool.name == "get_weather" and dict(tool.arguments) == {"type": "object", "required": ["city"]}
    assert load(minimal()).prompts["short"].expect is None


@pytest.mark.parametrize(
    ("expect", "expected"),
    [
        ({"regex": "(unclosed"}, "prompts.short.expect.regex: not a valid regular expression: missing ), unterminated subpattern"),
        ({"json_schema": {"type": "objekt"}}, "prompts.short.expect.json_schema: not a valid JSON Schema at type: "),
        ({"tool": "get_weather"}, "prompts.short.expect.tool: the prompt has no tools"),
        ({}, "prompts.short.expect: name at least one check: contains, not_contains, regex, json_schema, tool, max_chars, min_tokens"),
        ({"contain": "x"}, "prompts.short.expect.contain: unknown key (did you mean 'contains'?)"),
        ({"contains": [1]}, "prompts.short.expect.contains[0]: expected a string, got a number"),
        ({"max_chars": -1}, "prompts.short.expect.max_chars: must be at least 0"),
        ({"min_tokens": -1}, "prompts.short.expect.min_tokens: must be at least 1"),
    ],
)  # fmt: skip
def test_expect_errors(expect, expected):
    assert one_error(_prompt(expect=expect)).startswith(expected)


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        ("get_wether", "prompts.short.expect.tool: unknown tool 'get_wether' (did you mean 'get_weather'?)"),
        ({"arguments": {}}, "prompts.short.expect.tool.name: required"),
        ({"name": "get_weather", "arguments": {"type": 3}}, "prompts.short.expect.tool.arguments: not a valid JSON Schema"),
        ({"name": "get_weather", "args": {}}, "prompts.short.expect.tool.args: unknown key (did you mean 'arguments'?)"),
    ],
)  # fmt: skip
def test_expect_tool_errors(tool, expected):
    assert one_error(_prompt(tools=[TOOL], expect={"tool": tool})).startswith(expected)


# --------------------------------------------------------- prices, budget
def test_cached_input_price():
    data = minimal(prices={"sim/fast": {"input": 2.0, "output": 8.0, "cached_input": 0.5}})
    price = load(data).price("sim", "fast")
    assert price == Price(input=2.0, output=8.0, cached_input=0.5)
    # 1M prompt tokens of which 400k cached, 100k output
    assert price.cost_usd(1_000_000, 100_000, 400_000) == pytest.approx(0.6 * 2 + 0.4 * 0.5 + 0.1 * 8)
    assert price.cost_usd(1_000_000, 100_000) == pytest.approx(2 + 0.8)
    uncached = Price(input=2.0, output=8.0)
    assert uncached.cost_usd(1_000_000, 0, 400_000) == pytest.approx(2.0)  # cached at the input price
    assert uncached.cost_usd(None, None, None) == 0
    assert one_error(minimal(prices={"sim/fast": {"input": 1, "output": 1, "cached_input": -1}})) == (
        "prices.sim/fast.cached_input: must be at least 0 and at most 1,000,000"
    )
    assert one_error(minimal(prices={"sim/fast": {"input": 1, "output": 1, "cached": 1}})) == (
        "prices.sim/fast.cached: unknown key (did you mean 'cached_input'?)"
    )


def test_budget():
    assert load(minimal(budget={"monthly_usd": 50})).budget == Budget(monthly_usd=50.0, action="warn")
    assert load(minimal(budget={"monthly_usd": 9.5, "action": "refuse"})).budget == Budget(9.5, "refuse")
    assert load(minimal()).budget is None


@pytest.mark.parametrize(
    ("budget", "expected"),
    [
        ({}, "budget.monthly_usd: required"),
        ({"monthly_usd": 0}, "budget.monthly_usd: must be greater than 0 and at most 1,000,000,000"),
        ({"monthly_usd": "50$"}, "budget.monthly_usd: expected a number, got a string"),
        ({"monthly_usd": 5, "action": "stop"}, "budget.action: unknown action 'stop'; expected one of warn, refuse"),
        ({"monthly": 5}, "budget.monthly: unknown key (did you mean 'monthly_usd'?)"),
        (50, "budget: expected a mapping, got a number"),
    ],
)
def test_budget_errors(budget, expected):
    assert expected in errors(minimal(budget=budget))


def test_unknown_top_level_key_suggests_budget():
    assert one_error(minimal(budgett={"monthly_usd": 1})) == "budgett: unknown key (did you mean 'budget'?)"


# --------------------------------------------------------- change alerts
def test_change_rules():
    rules = [{"name": f"c-{m}", "metric": m, "kind": "change"} for m in CHANGE_METRICS]
    rules.append({"name": "tuned", "metric": "served_by", "kind": "change", "for_evaluations": 1,
                  "resolve_after": 5, "severity": "ticket", "repeat_interval": "1h", "match": {"provider": "sim"}})  # fmt: skip
    loaded = load(minimal(alerts=rules)).alerts
    assert [r.metric for r in loaded[:4]] == list(CHANGE_METRICS)
    assert all(r.kind == "change" and r.for_evaluations == 3 and r.resolve_after == 3 for r in loaded[:4])
    tuned = loaded[4]
    assert (tuned.for_evaluations, tuned.resolve_after, tuned.severity, tuned.repeat_interval_s) == (
        1,
        5,
        "ticket",
        3600,
    )
    assert dict(tuned.match) == {"provider": "sim"}


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ({"metric": "ttft_ms"}, "alerts[0].metric: ttft_ms is not for kind: change; expected one of served_by, model_version, system_fingerprint, answer_fingerprint"),
        ({"metric": "servedby"}, "alerts[0].metric: unknown metric 'servedby' (did you mean 'served_by'?); expected one of served_by, model_version, system_fingerprint, answer_fingerprint"),
        ({"above": 5}, "alerts[0].above: only for kind: threshold"),
        ({"window": "5m"}, "alerts[0].window: not for kind: change"),
        ({"min_change": "10%"}, "alerts[0].min_change: only for kind: regression"),
        ({"percentile": 90}, "alerts[0].percentile: only for kind: threshold"),
        ({"below": 1}, "alerts[0].below: only for kind: threshold"),
    ],
)  # fmt: skip
def test_change_rule_errors(rule, expected):
    spec = {"name": "c", "metric": "served_by", "kind": "change", **rule}
    assert one_error(minimal(alerts=[spec])) == expected


def test_numeric_rule_on_a_change_metric():
    spec = {"name": "t", "metric": "served_by", "kind": "threshold", "above": 1}
    assert one_error(minimal(alerts=[spec])) == (
        "alerts[0].metric: served_by needs kind: change; expected one of ttft_ms, ttft_answer_ms, total_ms, tps, error_rate, "
        "cache_hit_ratio"
    )


# ------------------------------------------------------------- alertmanager
def test_alertmanager_notifier():
    one = {"name": "am", "type": "alertmanager", "url": "http://am:9093"}
    (am,) = load(minimal(notifiers=[one])).notifiers
    assert isinstance(am, AlertmanagerConfig) and am.type == "alertmanager"
    assert (am.urls, am.timeout_s, am.resend_every_s, am.severities) == (("http://am:9093",), 10.0, 60.0, ())
    many = {"name": "am", "type": "alertmanager", "url": ["http://am-1:9093", "http://am-2:9093"], "timeout": "3s",
            "resend_every": "2m"}  # fmt: skip
    (am,) = load(minimal(notifiers=[many])).notifiers
    assert (am.urls, am.timeout_s, am.resend_every_s) == (("http://am-1:9093", "http://am-2:9093"), 3.0, 120.0)


def test_alertmanager_url_password_is_a_secret():
    spec = {"name": "am", "type": "alertmanager", "url": "http://ops:${AM_PASS}@am:9093"}
    config = load(minimal(notifiers=[spec]), env={"AM_PASS": "pa55-am-word"})
    assert "pa55-am-word" in config.secrets


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, "notifiers[0].url: required"),
        ({"url": "am:9093"}, "notifiers[0].url: not a URL"),
        ({"url": ["http://a", "nope"]}, "notifiers[0].url[1]: not a URL"),
        ({"url": []}, "notifiers[0].url: must not be empty"),
        ({"url": "http://a", "resend_every": "2h"}, "notifiers[0].resend_every: too long: at most 1h"),
        ({"url": "http://a", "urls": ["http://b"]}, "notifiers[0].urls: unknown key (did you mean 'url'?)"),
    ],
)
def test_alertmanager_errors(spec, expected):
    line = one_error(minimal(notifiers=[{"name": "am", "type": "alertmanager", **spec}]))
    assert line.startswith(expected)
