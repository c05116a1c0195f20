"""The `slos:` section (DESIGN §12): loading, one-line errors with their path, the JSON Schema, and
check-config listing each SLO's scopes."""

from __future__ import annotations

import io

import jsonschema
import pytest
import yaml

from monitor.commands.check_config import check_config_command
from monitor.config import ConfigError, load_config_text
from monitor.config.loader import _FILE

BASE = """
providers:
  openai: {protocol: openai-chat, regions: {global: "https://api.openai.com/v1", eu: "https://eu.example/v1"}, models: [gpt-4o-mini, gpt-4o]}
  groq: {protocol: openai-chat, regions: {global: "https://api.groq.com/openai/v1"}, models: [{name: llama-3.1-70b-versatile, as: llama-3.1-70b}]}
prompts:
  short: {messages: [{role: user, content: hi}], max_tokens: 8}
checks: [{providers: [openai, groq], prompts: [short]}]
"""


def load(slos: str, extra: str = ""):
    return load_config_text(BASE + extra + "slos:\n" + slos, secrets="defer")


def errors(slos: str, extra: str = "") -> list[str]:
    with pytest.raises(ConfigError) as exc:
        load(slos, extra)
    return exc.value.errors


def test_design_example_loads_with_its_defaults():
    (slo,) = load(
        """
  - name: chat-interactive
    match: {provider: openai, prompt: short}
    objective: 99.5%
    good: {ttft_ms: {below: 1500ms}}
    period: 30d
    per: target
"""
    ).slos
    assert slo.objective == 0.995 and slo.period_s == 30 * 86400 and slo.per == "target"
    assert slo.good.bounds() == (("ttft_ms", 1500.0, None),) and slo.good.checks
    assert dict(slo.match) == {"provider": "openai", "prompt": "short"}
    (default,) = load("  - {name: plain, objective: 0.99}\n").slos
    assert default.period_s == 30 * 86400 and default.per == "target" and default.good.bounds() == ()


def test_every_bound_and_answer_checks():
    (slo,) = load(
        "  - {name: all, objective: 99%, per: all, good: {ttft_ms: {below: 1.5s}, ttft_answer_ms: {below: 4000},"
        " total_ms: {below: 20s}, tps: {above: 30}, checks: false}}\n"
    ).slos
    assert slo.good.bounds() == (
        ("ttft_ms", 1500.0, None),
        ("ttft_answer_ms", 4000.0, None),
        ("total_ms", 20000.0, None),
        ("tps", None, 30.0),
    )
    assert not slo.good.checks


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("{name: a, objective: 100%}", "slos[0].objective: must be above 0% and below 100%"),
        ("{name: a, objective: 99}", "slos[0].objective:"),
        ("{name: a}", "slos[0].objective: required"),
        ("{name: a, objective: 99%, per: region}", "slos[0].per:"),
        ("{name: a, objective: 99%, period: 10m}", "slos[0].period: must be longer than"),
        (
            "{name: a, objective: 99%, good: {ttft_ms: {below: fast}}}",
            "slos[0].good.ttft_ms.below: expected milliseconds",
        ),
        ("{name: a, objective: 99%, good: {ttft_ms: {}}}", "slos[0].good.ttft_ms: give exactly one of below or above"),
        ("{name: a, objective: 99%, good: {ttft: {below: 1}}}", "slos[0].good.ttft: unknown key"),
        ("{name: a, objective: 99%, match: {provider: opneai}}", "slos[0].match.provider: unknown provider 'opneai'"),
    ],
)
def test_bad_entries_are_one_line_each_with_their_path(entry, message):
    found = errors(f"  - {entry}\n")
    assert any(line.startswith(message) for line in found), found
    assert all("\n" not in line for line in found)


def test_duplicate_names_and_severities_for_notifiers():
    found = errors("  - {name: a, objective: 99%}\n  - {name: a, objective: 98%}\n")
    assert any("slos[1].name: duplicate SLO name 'a'" in line for line in found)
    # SLO alerts page and ticket: a notifier may route those severities with no alert rule at all.
    extra = "notifiers: [{name: pager, type: log, severities: [page, ticket]}]\n"
    assert load("  - {name: a, objective: 99%}\n", extra).notifiers[0].severities == ("page", "ticket")


def test_json_schema_accepts_the_section_and_refuses_unknown_keys():
    schema = _FILE.json_schema()
    good = yaml.safe_load(BASE + "slos: [{name: a, objective: 99.5%, good: {ttft_ms: {below: 1500}}, per: provider}]")
    jsonschema.validate(good, schema)
    bad = {**good, "slos": [{"name": "a", "objective": "99%", "burn": 1}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_check_config_lists_each_slo_and_its_scopes(tmp_path):
    path = tmp_path / "firsttoken.yaml"
    path.write_text(
        BASE
        + "slos:\n  - {name: per-target, objective: 99.5%, match: {provider: openai, region: eu}}\n"
        + "  - {name: per-model, objective: 99%, per: model, good: {ttft_ms: {below: 1500}}}\n"
        + "  - {name: nothing, objective: 99%, match: {model: 'claude*'}}\n"
    )
    out = io.StringIO()
    assert check_config_command(str(path), out, io.StringIO(), env={}) == 0
    text = out.getvalue()
    assert "per-target: 99.5% of probes good (ok) over 30d, one budget per target: 2 scopes" in text
    assert "openai/gpt-4o@eu:short (1 target)" in text
    assert "per-model: 99% of probes good (ok and ttft_ms < 1500) over 30d, one budget per model: 3 scopes" in text
    assert "*/llama-3.1-70b (1 target)" in text  # the canonical name (DESIGN §10)
    assert "nothing: " in text and "note: no configured target matches it" in text
