"""The config loader: the DESIGN example, interpolation, the matrix, errors and secrets."""

from __future__ import annotations

import copy
import dataclasses
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monitor.config import (
    AppriseConfig,
    Config,
    ConfigError,
    Defaults,
    PagerDutyConfig,
    Target,
    WebhookConfig,
    load_config,
    load_config_text,
)
from monitor.protocols.base import Message
from tests.config_helpers import (
    DESIGN_ENV,
    DESIGN_EXAMPLE,
    RAG_TEXT,
    design_dir,
    dump,
    errors,
    load,
    minimal,
    one_error,
)

__all__ = ["design_dir"]  # a fixture, imported for pytest

DESIGN_MD = Path(__file__).resolve().parents[3] / "shared" / "DESIGN.md"

DESIGN_TARGETS = [
    "anthropic/claude-3-5-haiku-latest@global:rag-4k",
    "anthropic/claude-3-5-haiku-latest@global:short",
    "bedrock/anthropic.claude-3-5-haiku-20241022-v1:0@us-east-1:short",
    "openai/gpt-4o-mini@global:rag-4k",
    "openai/gpt-4o-mini@global:short",
    "openai/gpt-4o@global:rag-4k",
    "openai/gpt-4o@global:short",
]


# ------------------------------------------------------------- DESIGN example
def test_design_example_is_current():
    if not DESIGN_MD.exists():
        pytest.skip("DESIGN.md is not next to the repository")
    found = re.search(r"must keep loading unchanged\.\n\n```yaml\n(.*?)```", DESIGN_MD.read_text(), re.DOTALL)
    assert found, "the §3 example moved; update this test"
    assert found.group(1) == DESIGN_EXAMPLE


def test_design_example_loads_and_expands(design_dir):
    config = load_config(design_dir / "firsttoken.yaml", DESIGN_ENV)
    assert [t.id for t in config.targets] == DESIGN_TARGETS
    by_id = {t.id: t for t in config.targets}

    t = by_id["openai/gpt-4o-mini@global:short"]
    assert (t.provider, t.model, t.region, t.prompt) == ("openai", "gpt-4o-mini", "global", "short")
    assert (t.protocol, t.base_url) == ("openai-chat", "https://api.openai.com/v1")
    assert (t.interval_s, t.timeout_s, t.ttft_timeout_s) == (120, 60, 30)  # check interval, default timeouts
    assert t.api_key == DESIGN_ENV["OPENAI_API_KEY"]
    assert t.cache_bust is True and t.agents == ()
    assert t.prompt_spec.messages == (Message("user", "Explain TTFT in one sentence."),)
    assert t.max_tokens == 64

    rag = by_id["anthropic/claude-3-5-haiku-latest@global:rag-4k"]
    assert rag.protocol == "anthropic" and rag.api_key == DESIGN_ENV["ANTHROPIC_API_KEY"]
    assert rag.prompt_spec.messages == (Message("user", RAG_TEXT),)
    assert rag.prompt_spec.max_tokens == 128 and rag.prompt_spec.file == "prompts/rag-4k.txt"

    bedrock = by_id["bedrock/anthropic.claude-3-5-haiku-20241022-v1:0@us-east-1:short"]
    assert bedrock.interval_s == 300 and bedrock.api_key is None  # defaults.interval; AWS chain credentials
    assert bedrock.base_url == "https://bedrock-runtime.us-east-1.amazonaws.com"
    assert not any("openrouter" in i or "eu-west-1" in i for i in by_id)


def test_design_example_sections(design_dir):
    config = load_config(design_dir / "firsttoken.yaml", DESIGN_ENV)
    assert config.database_url == "sqlite:///firsttoken.db" and config.agent == "local"
    assert config.defaults == Defaults(interval_s=300, timeout_s=60, ttft_timeout_s=30)
    assert config.source_path == design_dir / "firsttoken.yaml"
    assert list(config.providers) == ["openai", "anthropic", "openrouter", "bedrock"]
    router = config.providers["openrouter"]
    assert dict(router.headers) == {"x-route": '{"provider":"aws","variant":"fp8"}'}
    assert dict(router.params) == {"provider": {"order": ["fireworks"], "allow_fallbacks": False}}
    assert router.cache_bust is True
    assert len(config.checks) == 2 and config.checks[1].regions == ("us-east-1",)

    regression, slo, errs = config.alerts
    assert (regression.kind, regression.min_change, regression.severity) == ("regression", 0.5, "page")
    assert regression.baseline_window_s == 86400 and regression.window_s == 900
    assert (slo.kind, slo.percentile, slo.above, slo.below, slo.severity) == ("threshold", 90, 2000, None, "ticket")
    assert (errs.metric, errs.above, errs.percentile) == ("error_rate", 0.2, None)

    hooks, oncall, chat = config.notifiers
    assert isinstance(hooks, WebhookConfig) and hooks.url == "http://127.0.0.1:9000/alerts"
    assert hooks.secret == DESIGN_ENV["WEBHOOK_SECRET"] and hooks.type == "webhook"
    assert isinstance(oncall, PagerDutyConfig) and oncall.routing_key == DESIGN_ENV["PD_ROUTING_KEY"]
    assert oncall.severities == ("page",) and oncall.url == "https://events.pagerduty.com/v2/enqueue"
    assert oncall.wants("page") and not oncall.wants("ticket") and hooks.wants("ticket")
    assert isinstance(chat, AppriseConfig) and chat.urls == (DESIGN_ENV["SLACK_APPRISE_URL"],)

    (silence,) = config.silences
    assert dict(silence.match) == {"provider": "bedrock", "region": "eu-west-1"}
    assert silence.until == datetime(2026, 12, 1, 6, tzinfo=UTC) and silence.reason == "provider maintenance"

    assert config.price("openai", "gpt-4o").output == 10.0
    assert config.prices["openai/gpt-4o-mini"].cost_usd(1_000_000, 1_000_000) == pytest.approx(0.75)
    assert config.price("bedrock", "x") is None
    assert (config.retention.raw_s, config.retention.rollups_s) == (30 * 86400, 400 * 86400)


def test_design_example_secrets_collected_and_hidden(design_dir):
    config = load_config(design_dir / "firsttoken.yaml", DESIGN_ENV)
    assert set(DESIGN_ENV.values()) <= config.secrets
    assert '{"provider":"aws","variant":"fp8"}' in config.secrets  # header values are secrets
    text = repr(config)
    for secret in DESIGN_ENV.values():
        assert secret not in text
    for value in (*config.targets, *config.providers.values(), *config.notifiers):
        for secret in DESIGN_ENV.values():
            assert secret not in repr(value)


def test_design_example_errors_name_each_missing_variable(design_dir):
    lines = errors(DESIGN_EXAMPLE, design_dir, {})
    assert "providers.openai.api_key: environment variable OPENAI_API_KEY is not set" in lines
    assert "notifiers[0].secret: environment variable WEBHOOK_SECRET is not set" in lines
    assert "notifiers[2].urls[0]: environment variable SLACK_APPRISE_URL is not set" in lines
    assert len([line for line in lines if "is not set" in line]) == len(DESIGN_ENV)


# -------------------------------------------------------- top level and file
def test_env_overrides_database_and_agent():
    config = load(minimal(database="sqlite:///a.db", agent="eu-1"))
    assert (config.database_url, config.agent) == ("sqlite:///a.db", "eu-1")
    config = load(
        minimal(database="sqlite:///a.db"),
        env={"FIRSTTOKEN_DATABASE_URL": "sqlite:///b.db", "FIRSTTOKEN_AGENT": "us-2"},
    )
    assert (config.database_url, config.agent) == ("sqlite:///b.db", "us-2")
    assert load(minimal()).database_url == "sqlite:///firsttoken.db"


def test_database_password_is_a_secret():
    url = "postgresql+psycopg://mon:pa55word@db:5432/ft"
    config = load(minimal(), env={"FIRSTTOKEN_DATABASE_URL": url})
    assert config.database_url == url and "pa55word" in config.secrets
    assert "pa55word" not in repr(config)


def test_bad_overrides_are_errors():
    assert one_error(minimal(), env={"FIRSTTOKEN_AGENT": "bad agent!"}).startswith("FIRSTTOKEN_AGENT (environment):")
    assert one_error(minimal(database="not a url")).startswith("database: not a database URL")


def test_dashboard_url():
    assert load(minimal(dashboard_url="https://ft.example.com")).dashboard_url == "https://ft.example.com"
    assert one_error(minimal(dashboard_url="ft.example.com")).startswith("dashboard_url: not a URL")


def test_load_config_missing_file(tmp_path):
    with pytest.raises(ConfigError) as exc:
        load_config(tmp_path / "nope.yaml", {})
    assert exc.value.errors == ["cannot read the file: No such file or directory"]
    assert exc.value.lines()[0].startswith(str(tmp_path / "nope.yaml") + ": ")


def test_load_config_not_utf8(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_bytes(b"agent: \xff\xfe")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(path, {})


def test_empty_config_is_valid_and_empty():
    config = load({"agent": "a1"})
    assert config.targets == () and config.providers == {} and config.alerts == ()


def test_str_of_config_error_joins_lines():
    exc = ConfigError(["a: one", "b: two"], "f.yaml")
    assert str(exc) == "a: one\nb: two"
    assert exc.lines() == ["f.yaml: a: one", "f.yaml: b: two"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: [1, 2\nb: 3", "line 2, column 2: invalid YAML:"),
        ("providers:\n  a: 1\n  a: 2\n", "line 3, column 3: invalid YAML: duplicate key 'a'"),
        ("agent: 'x\n", "invalid YAML"),
        ("a: !!python/object:os.system x", "invalid YAML"),
        ("until: 2026-13-45T00:00:00Z", "invalid YAML"),
        ("- 1\n- 2\n", "top level: expected a mapping of settings"),
        ("", "got an empty document"),
        ("just text", "top level: expected a mapping of settings"),
        ("a: 1\n---\nb: 2\n", "invalid YAML"),
        ("\x00", "invalid YAML"),
    ],
)
def test_document_level_errors(text, expected):
    line = one_error(text)
    assert expected in line


def test_yaml_1_1_booleans_are_plain_strings():
    data = minimal()
    data["providers"]["sim"]["regions"] = {"no": "http://127.0.0.1:1/v1"}
    text = dump(data).replace("'no'", "no")
    assert [t.region for t in load(text).targets] == ["no"]
    assert one_error(dump(minimal(defaults={"cache_bust": "yes"})).replace("'yes'", "yes")).startswith(
        "defaults.cache_bust: expected true or false"
    )


def test_unknown_keys_with_suggestions():
    data = minimal(databse="sqlite:///x.db")
    data["providers"]["sim"]["modles"] = ["x"]
    data["checks"][0]["interal"] = "5m"
    assert errors(data) == [
        "databse: unknown key (did you mean 'database'?)",
        "providers.sim.modles: unknown key (did you mean 'models'?)",
        "checks[0].interal: unknown key (did you mean 'interval'?)",
    ]


def test_many_errors_reported_at_once():
    data = minimal(defaults={"interval": "0s", "timeout": "-1", "max_concurrency": "many"})
    data["prompts"]["short"]["max_tokens"] = 2_000_000
    data["providers"]["sim"]["regions"]["local"] = "not a url"
    data["checks"].append({"providers": ["sin"], "prompts": ["shot"]})
    assert errors(data) == [
        "defaults.interval: must be longer than zero",
        "defaults.timeout: duration must not be negative, got '-1'",
        "defaults.max_concurrency: expected a whole number, got a string",
        "prompts.short.max_tokens: must be at least 1 and at most 1,000,000",
        "providers.sim.regions.local: not a URL (expected http://host/... or https://host/...), got 'not a url'",
        "checks[1].providers[0]: unknown provider 'sin' (did you mean 'sim'?)",
        "checks[1].prompts[0]: unknown prompt 'shot' (did you mean 'short'?)",
    ]


@pytest.mark.parametrize(
    ("section", "value", "expected"),
    [
        ("defaults", [], "defaults: expected a mapping, got a list"),
        ("prompts", "x", "prompts: expected a mapping, got a string"),
        ("providers", 3, "providers: expected a mapping, got a number"),
        ("checks", {"a": 1}, "checks: expected a list, got a mapping"),
        ("alerts", True, "alerts: expected a list, got a boolean"),
        ("retention", "30d", "retention: expected a mapping, got a string"),
        ("agent", ["a"], "agent: expected a string, got a list"),
    ],
)
def test_wrong_section_types(section, value, expected):
    data = minimal(**{section: value})
    assert expected in errors(data)


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("interval", "2d", "defaults.interval: too long: at most 1d"),
        ("interval", "25h", "defaults.interval: too long: at most 1d"),
        ("timeout", "2h", "defaults.timeout: too long: at most 1h"),
        ("interval", 0, "defaults.interval: must be longer than zero"),
        ("interval", -5, "defaults.interval: duration must not be negative, got -5"),
        ("interval", "-5m", "defaults.interval: expected a duration like 90s, 5m, 2h, 1d, 1h30m or 500ms, got '-5m'"),
        ("interval", True, "defaults.interval: expected a duration like 90s, 5m, 2h, 1d, 1h30m or 500ms, got True"),
        ("interval", [1], "defaults.interval: expected a duration like 90s, 5m, 2h, 1d, 1h30m or 500ms, got a list"),
        ("max_per_provider_region", 0, "defaults.max_per_provider_region: must be at least 1 and at most 100,000"),
        ("max_concurrency", 2.5, "defaults.max_concurrency: expected a whole number"),
        ("cache_bust", 1, "defaults.cache_bust: expected true or false, got a number"),
    ],
)
def test_defaults_errors(field, value, expected):
    assert one_error(minimal(defaults={field: value})) == expected


def test_defaults_values():
    config = load(minimal(defaults={"interval": "1h30m", "timeout": "90s", "ttft_timeout": "500ms", "cache_bust": False,
                                    "max_concurrency": 200, "max_per_provider_region": 4}))  # fmt: skip
    assert config.defaults == Defaults(5400, 90, 0.5, False, 200, 4)


def test_ttft_timeout_longer_than_timeout_in_defaults():
    assert one_error(minimal(defaults={"timeout": "10s", "ttft_timeout": "20s"})) == (
        "defaults: ttft_timeout (20s) must not be longer than timeout (10s)"
    )


# ----------------------------------------------------------- interpolation
def _with_key(value: str) -> dict:
    data = minimal()
    data["providers"]["sim"]["api_key"] = value
    return data


def test_interpolation_forms():
    env = {"K_A": "alpha", "EMPTY": ""}
    assert load(_with_key("${K_A}"), env=env).targets[0].api_key == "alpha"
    assert load(_with_key("pre-${K_A}-post"), env=env).targets[0].api_key == "pre-alpha-post"
    assert load(_with_key("${MISSING:-fallback}"), env=env).targets[0].api_key == "fallback"
    assert load(_with_key("${EMPTY:-fallback}"), env=env).targets[0].api_key == "fallback"
    assert load(_with_key("$${K_A}"), env=env).targets[0].api_key == "${K_A}"
    assert load(_with_key("cost $5"), env=env).targets[0].api_key == "cost $5"
    assert load(_with_key("${MISSING:-}"), env=env).targets[0].api_key is None  # optional key


def test_interpolated_value_with_yaml_syntax_stays_a_string():
    env = {"ODD": "a: b # c, [d] {e} 'f' \"g\"\nh"}
    data = minimal()
    data["prompts"]["short"]["messages"][0]["content"] = "${ODD}"
    assert load(data, env=env).prompts["short"].messages[0].content == env["ODD"]


def test_interpolated_numbers_and_booleans_are_accepted():
    data = minimal(defaults={"interval": "${EVERY}", "cache_bust": "${BUST}", "max_concurrency": "${MAXC}"})
    data["prompts"]["short"]["max_tokens"] = "${MT:-32}"
    config = load(data, env={"EVERY": "90", "BUST": "false", "MAXC": "12"})
    assert (config.defaults.interval_s, config.defaults.cache_bust, config.defaults.max_concurrency) == (90, False, 12)
    assert config.prompts["short"].max_tokens == 32


def test_literal_numeric_strings_are_not_numbers():
    data = minimal()
    data["prompts"]["short"]["max_tokens"] = "64"
    assert one_error(data) == "prompts.short.max_tokens: expected a whole number, got a string"


def test_interpolation_errors():
    data = _with_key("${A} ${B}")
    data["checks"][0]["agents"] = ["${bad-name}"]
    assert errors(data) == [
        "providers.sim.api_key: environment variable A is not set",
        "providers.sim.api_key: environment variable B is not set",
        "checks[0].agents[0]: invalid variable reference '${bad-name}': expected ${NAME} or ${NAME:-default}",
    ]
    assert one_error(_with_key("${OPEN")) == "providers.sim.api_key: unterminated ${ (write $${ for a literal ${)"


def test_keys_are_not_interpolated():
    data = minimal()
    data["providers"]["sim"]["regions"] = {"${X}": "http://h/v1"}
    assert "invalid name" in one_error(data, env={"X": "r"})


def test_secret_named_variables_become_secrets():
    data = minimal()
    data["providers"]["sim"]["params"] = {"user": "${MY_TOKEN}", "tag": "${PLAIN}"}
    config = load(data, env={"MY_TOKEN": "tok-123456", "PLAIN": "visible-value"})
    assert "tok-123456" in config.secrets and "visible-value" not in config.secrets
    assert config.providers["sim"].params["user"] == "tok-123456"
    assert "tok-123456" not in repr(config) and "visible-value" in repr(config)
    for word in ("KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL"):
        name = f"A_{word.lower()}_B"
        data["providers"]["sim"]["params"] = {"x": "${" + name + "}"}
        assert f"v-{word}" in load(data, env={name: f"v-{word}"}).secrets


# --------------------------------------------------------------- prompts
def test_prompt_with_system_and_file(tmp_path):
    (tmp_path / "p.txt").write_text("question?")
    data = minimal()
    data["prompts"] = {"short": {"file": "p.txt", "system": "Be brief."}}
    prompt = load(data, tmp_path).prompts["short"]
    assert prompt.messages == (Message("system", "Be brief."), Message("user", "question?"))
    assert prompt.max_tokens == 64  # default


def test_prompt_file_absolute_inside_is_fine(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "p.txt").write_text("q")
    data = minimal()
    data["prompts"] = {"short": {"file": str(tmp_path / "sub" / "p.txt")}}
    assert load(data, tmp_path).prompts["short"].messages[0].content == "q"


@pytest.mark.parametrize(
    ("file", "expected"),
    [
        ("../outside.txt", "prompts.short.file: path traversal: '../outside.txt' is outside the config's directory"),
        ("sub/../../outside.txt", "path traversal"),
        ("/etc/passwd", "prompts.short.file: path traversal: '/etc/passwd' is outside the config's directory"),
        ("missing.txt", "prompts.short.file: no such file 'missing.txt' (relative to the config's directory)"),
        ("sub", "no such file"),
        ("empty.txt", "prompts.short.file: file 'empty.txt' is empty"),
        ("binary.txt", "prompts.short.file: file 'binary.txt' is not UTF-8 text"),
        ("", "prompts.short.file: expected a file name, got an empty string"),
        ("a\x00b", "prompts.short.file: invalid file name"),
    ],
)
def test_prompt_file_errors(tmp_path, file, expected):
    base = tmp_path / "cfg"
    (base / "sub").mkdir(parents=True)
    (tmp_path / "outside.txt").write_text("secret stuff")
    (base / "empty.txt").write_text("  \n")
    (base / "binary.txt").write_bytes(b"\xff\xfe\x00")
    data = minimal()
    data["prompts"] = {"short": {"file": file}}
    assert expected in one_error(data, base)


def test_prompt_file_symlink_out_is_traversal(tmp_path):
    base = tmp_path / "cfg"
    base.mkdir()
    (tmp_path / "outside.txt").write_text("x")
    (base / "link.txt").symlink_to(tmp_path / "outside.txt")
    data = minimal()
    data["prompts"] = {"short": {"file": "link.txt"}}
    assert "path traversal" in one_error(data, base)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"max_tokens": 5}, "prompts.short: give exactly one of messages or file"),
        ({"messages": [{"role": "user", "content": "x"}], "file": "a.txt"}, "prompts.short: give exactly one of messages or file"),
        ({"messages": []}, "prompts.short.messages: must not be empty"),
        ({"messages": "hi"}, "prompts.short.messages: expected a list, got a string"),
        ({"messages": [{"role": "robot", "content": "x"}]}, "prompts.short.messages[0].role: unknown role 'robot'"),
        ({"messages": [{"role": "user"}]}, "prompts.short.messages[0].content: required"),
        ({"messages": [{"role": "user", "content": "x", "name": "n"}]}, "prompts.short.messages[0].name: unknown key"),
        ({"messages": [{"role": "system", "content": "x"}]}, "prompts.short: needs a user message, not only a system one"),
        ({"system": "s", "messages": [{"role": "system", "content": "x"}, {"role": "user", "content": "y"}]},
         "prompts.short.messages[0].role: a system message is also given by system:"),
        ({"messages": [{"role": "user", "content": "x"}], "max_tokens": 0}, "prompts.short.max_tokens: must be at least 1"),
        ({"messages": [{"role": "user", "content": "x"}], "max_tokens": 1_000_001}, "at most 1,000,000"),
    ],
)  # fmt: skip
def test_prompt_errors(spec, expected):
    data = minimal()
    data["prompts"] = {"short": spec}
    assert any(expected in line for line in errors(data)), errors(data)


def test_prompt_and_provider_names_are_checked():
    data = minimal()
    data["prompts"]["bad name"] = {"messages": [{"role": "user", "content": "x"}]}
    data["providers"]["a/b"] = data["providers"]["sim"]
    assert errors(data) == [
        'prompts["bad name"]: invalid name: '
        + "letters, digits, '.', '_' or '-', at most 64, starting with a letter or digit",
        "providers.a/b: invalid name: letters, digits, '.', '_' or '-', at most 64, starting with a letter or digit",
    ]


# -------------------------------------------------------------- providers
@pytest.mark.parametrize("protocol", ["openai-chat", "openai-responses", "azure-openai", "anthropic", "gemini",
                                      "bedrock-converse", "ollama"])  # fmt: skip
def test_every_design_protocol_is_known(protocol):
    data = minimal()
    data["providers"]["sim"]["protocol"] = protocol
    assert load(data).targets[0].protocol == protocol


def test_unknown_protocol_suggests():
    data = minimal()
    data["providers"]["sim"]["protocol"] = "anthropik"
    line = one_error(data)
    assert line.startswith("providers.sim.protocol: unknown protocol 'anthropik' (did you mean 'anthropic'?); known: ")


def test_protocol_option_errors_are_prefixed_with_the_provider_path():
    data = minimal()
    data["providers"]["sim"]["options"] = {"max_tokens_field": "tokens"}
    assert one_error(data) == "providers.sim.options.max_tokens_field: must be max_tokens or max_completion_tokens"
    data["providers"]["sim"]["protocol"] = "azure-openai"
    data["providers"]["sim"]["options"] = {"auth": "magic"}
    assert one_error(data) == "providers.sim.options.auth: must be api-key or bearer"


def test_protocol_options_kept_read_only():
    data = minimal()
    data["providers"]["sim"]["options"] = {"max_tokens_field": "max_tokens", "include_usage": False}
    target = load(data).targets[0]
    assert dict(target.options) == {"max_tokens_field": "max_tokens", "include_usage": False}
    with pytest.raises(TypeError):
        target.options["x"] = 1  # type: ignore[index]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"protocol": None}, "providers.sim.protocol: required"),
        ({"regions": None}, "providers.sim.regions: required"),
        ({"regions": {}}, "providers.sim.regions: must name at least one region"),
        ({"regions": ["http://x"]}, "providers.sim.regions: expected a mapping, got a list"),
        ({"regions": {"r": "ftp://x/"}}, "providers.sim.regions.r: not a URL"),
        ({"regions": {"r": "http://"}}, "providers.sim.regions.r: not a URL"),
        ({"regions": {"r": "http://h:99999/"}}, "providers.sim.regions.r: not a URL"),
        ({"regions": {"r": 5}}, "providers.sim.regions.r: expected a URL, got a number"),
        ({"models": []}, "providers.sim.models: must not be empty"),
        ({"models": "m"}, "providers.sim.models: expected a list, got a string"),
        ({"models": ["a", "a"]}, "providers.sim.models[1]: duplicate 'a'"),
        ({"models": ["a b"]}, "providers.sim.models[0]: invalid model name 'a b': no spaces"),
        ({"models": [1]}, "providers.sim.models[0]: expected a string, got a number"),
        ({"api_key": 12345}, "providers.sim.api_key: expected a string, got a number"),
        ({"headers": {"bad header": "v"}}, 'providers.sim.headers["bad header"]: not a valid HTTP header name'),
        ({"headers": {"x-a": "v\nInjected: 1"}}, "providers.sim.headers.x-a: must be one line"),
        ({"headers": {"x-a": ["v"]}}, "providers.sim.headers.x-a: expected a string, got a list"),
        ({"params": {"t": float("nan")}}, "providers.sim.params.t: must be a finite number"),
        ({"params": {"d": datetime(2020, 1, 1)}}, "providers.sim.params.d: expected a JSON value, got a datetime"),
        ({"params": ["x"]}, "providers.sim.params: expected a mapping, got a list"),
        ({"cache_bust": "no"}, "providers.sim.cache_bust: expected true or false, got a string"),
        ({"timeout": "0s"}, "providers.sim.timeout: must be longer than zero"),
        ({"interval": "48h"}, "providers.sim.interval: too long: at most 1d"),
    ],
)
def test_provider_errors(change, expected):
    data = minimal()
    data["providers"]["sim"].update(change)
    data["providers"]["sim"] = {k: v for k, v in data["providers"]["sim"].items() if v is not None}
    assert any(line.startswith(expected) for line in errors(data)), errors(data)


def test_provider_headers_params_flow_to_targets():
    data = minimal()
    data["providers"]["sim"].update(headers={"x-route": "a", "x-n": 5}, params={"temperature": 0, "extra": {"a": [1]}})
    target = load(data).targets[0]
    assert dict(target.headers) == {"x-route": "a", "x-n": "5"}
    assert dict(target.params) == {"temperature": 0, "extra": {"a": [1]}}
    assert "x-route" not in repr(target)  # header values are secret; headers are repr=False


# --------------------------------------------------------------- the matrix
def _matrix_config() -> dict:
    data = minimal()
    data["prompts"]["long"] = {"messages": [{"role": "user", "content": "long"}], "max_tokens": 100}
    data["providers"] = {
        "a": {
            "protocol": "openai-chat",
            "regions": {"us": "http://a-us/v1", "eu": "http://a-eu/v1"},
            "models": ["m1", "m2"],
        },
        "b": {"protocol": "anthropic", "regions": {"us": "http://b-us"}, "models": ["x1"]},
    }
    data["checks"] = [{"providers": ["a", "b"], "prompts": ["short", "long"]}]
    return data


def test_matrix_is_the_cartesian_product_sorted_by_id():
    ids = [t.id for t in load(_matrix_config()).targets]
    assert ids == sorted(ids) and len(ids) == (2 * 2 + 1) * 2
    assert "a/m1@eu:long" in ids and "b/x1@us:short" in ids


def test_filters():
    data = _matrix_config()
    data["checks"] = [
        {"providers": ["a"], "models": ["m2"], "regions": ["eu"], "prompts": ["short"]},
        {"providers": ["a", "b"], "regions": ["us"], "prompts": ["long"]},
    ]
    assert [t.id for t in load(data).targets] == ["a/m1@us:long", "a/m2@eu:short", "a/m2@us:long", "b/x1@us:long"]


def test_filter_errors():
    data = _matrix_config()
    data["checks"] = [
        {"providers": ["a"], "models": ["mm1"], "prompts": ["short"]},
        {"providers": ["a", "b"], "regions": ["eu"], "prompts": ["short"]},
        {"providers": ["b"], "regions": [], "prompts": ["long"]},
    ]
    assert errors(data) == [
        "checks[0].models[0]: unknown model 'mm1' for provider a (did you mean 'm1'?)",
        "checks[1].regions: provider 'b' has none of these regions",
        "checks[2].regions: must not be empty (leave it out for every one)",
    ]


def test_check_errors():
    data = _matrix_config()
    data["checks"] = [
        {"prompts": ["short"]},
        {"providers": [], "prompts": ["short"]},
        {"providers": ["a", "a"], "prompts": ["short"], "agents": "eu"},
        "a",
    ]
    assert errors(data) == [
        "checks[0].providers: required",
        "checks[1].providers: must not be empty",
        "checks[2].providers[1]: duplicate 'a'",
        "checks[2].agents: expected a list, got a string",
        "checks[3]: expected a mapping, got a string",
    ]


def test_precedence_check_over_provider_over_defaults():
    data = _matrix_config()
    data["defaults"] = {"interval": "10m", "timeout": "40s", "ttft_timeout": "20s", "cache_bust": False}
    data["providers"]["a"].update(interval="5m", timeout="30s", cache_bust=True)
    data["checks"] = [
        {"providers": ["a"], "regions": ["us"], "prompts": ["short"], "interval": "1m", "ttft_timeout": "5s"},
        {"providers": ["a"], "regions": ["eu"], "prompts": ["short"]},
        {"providers": ["b"], "prompts": ["short"]},
    ]
    t = {x.id: x for x in load(data).targets}
    assert (t["a/m1@us:short"].interval_s, t["a/m1@us:short"].timeout_s, t["a/m1@us:short"].ttft_timeout_s) == (
        60,
        30,
        5,
    )
    assert (t["a/m1@eu:short"].interval_s, t["a/m1@eu:short"].timeout_s, t["a/m1@eu:short"].ttft_timeout_s) == (
        300,
        30,
        20,
    )
    assert (t["b/x1@us:short"].interval_s, t["b/x1@us:short"].timeout_s, t["b/x1@us:short"].ttft_timeout_s) == (
        600,
        40,
        20,
    )
    assert t["a/m1@us:short"].cache_bust is True and t["b/x1@us:short"].cache_bust is False


def test_ttft_timeout_over_timeout_blames_the_level_that_set_it():
    data = _matrix_config()
    data["providers"]["b"]["ttft_timeout"] = "2m"
    data["checks"] = [
        {"providers": ["a"], "prompts": ["short"], "timeout": "10s"},
        {"providers": ["b"], "prompts": ["short"]},
    ]
    assert errors(data) == [
        "checks[0]: ttft_timeout (30s) must not be longer than timeout (10s)",
        "providers.b: ttft_timeout (2m) must not be longer than timeout (1m)",
    ]


def test_same_target_from_two_checks_is_an_error():
    data = _matrix_config()
    data["checks"].append({"providers": ["a"], "models": ["m1"], "prompts": ["short"], "interval": "1m"})
    assert one_error(data) == (
        "checks[1]: 2 target(s) already produced by checks[0], e.g. a/m1@eu:short (a target may come from one check only)"
    )


def test_agents():
    data = _matrix_config()
    data["checks"] = [
        {"providers": ["a"], "prompts": ["short"], "agents": ["eu-1", "eu-2"]},
        {"providers": ["b"], "prompts": ["short"]},
    ]
    config = load(data, env={"FIRSTTOKEN_AGENT": "eu-2"})
    assert config.agent == "eu-2"
    assert len(config.targets_for_agent()) == 5
    assert [t.id for t in config.targets_for_agent("us-1")] == ["b/x1@us:short"]
    assert all(t.runs_on("eu-1") for t in config.targets)
    assert config.checks[0].agents == ("eu-1", "eu-2")


def test_references_to_broken_entries_are_not_reported_twice():
    data = _matrix_config()
    data["providers"]["a"]["protocol"] = "nope"
    data["checks"] = [{"providers": ["a"], "models": ["m1"], "prompts": ["short"]}]
    assert errors(data) == [
        "providers.a.protocol: unknown protocol 'nope'; known: " + errors(data)[0].split("known: ")[1],
    ]


def test_values_are_frozen():
    config = load(_matrix_config())
    target = config.targets[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        target.interval_s = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        config.providers["c"] = config.providers["a"]  # type: ignore[index]
    assert isinstance(config.targets, tuple) and isinstance(target.prompt_spec.messages, tuple)
    assert isinstance(target, Target) and isinstance(config, Config)
    assert hash(target) == hash(dataclasses.replace(target))
    assert config.target(target.id) is target and config.target("nope") is None


# ----------------------------------------------------------- secret hygiene
def test_bad_url_from_a_secret_variable_is_not_printed():
    data = minimal()
    data["providers"]["sim"]["regions"]["local"] = "${ENDPOINT_TOKEN}"
    line = one_error(data, env={"ENDPOINT_TOKEN": "not-a-url-but-a-secret-123"})
    assert line == "providers.sim.regions.local: not a URL (expected http://host/... or https://host/...), got '***'"


def test_long_secret_is_not_leaked_by_truncation():
    secret = "s3cr3t-" + "x" * 200
    data = minimal()
    data["providers"]["sim"]["regions"]["local"] = "bad ${SOME_KEY}"
    line = one_error(data, env={"SOME_KEY": secret})
    assert "s3cr3t" not in line and "xxxx" not in line


def test_secret_inside_url_is_masked_in_repr_not_in_value():
    data = minimal()
    data["providers"]["sim"]["regions"]["local"] = "https://gen.example.com/v1?key=${GEMINI_API_KEY}"
    config = load(data, env={"GEMINI_API_KEY": "AIza-very-secret"})
    assert config.targets[0].base_url == "https://gen.example.com/v1?key=AIza-very-secret"
    assert "AIza-very-secret" not in repr(config)


def test_literal_api_key_in_file_is_still_secret():
    data = minimal()
    data["providers"]["sim"]["api_key"] = "literal-key-123"
    config = load(data)
    assert "literal-key-123" in config.secrets and "literal-key-123" not in repr(config)


def test_secret_value_never_in_any_error():
    data = minimal()
    secret = "hunter2hunter2"
    data["providers"]["sim"]["api_key"] = secret
    data["providers"]["sim"]["headers"] = {"x-a": secret + "\nX"}
    data["providers"]["sim"]["models"] = [secret + " x"]
    data["prompts"]["short"]["file"] = secret
    for line in errors(data):
        assert secret not in line


# ---------------------------------------------------------- garbage in
GARBAGE = [
    "{",
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    "a: &a [*a]",
    "&x {providers: *x}",
    "providers: &p {a: *p}",
    "a: &a [*a, *a, *a]\nb: &b [*a, *a, *a]\nc: &c [*b, *b, *b]\nd: &d [*c, *c, *c]\ne: [*d, *d, *d, *d, *d]",
    "? [a]\n: 1",
    "{1: 2, null: 3, true: 4}",
    "providers: {p: {regions: {1: 2}, models: [[]], protocol: {}}}",
    "checks: [null, [], {providers: [null]}]",
    "alerts: [{name: x, metric: tps, kind: threshold, above: .inf}]",
    "silences: [{match: {provider: '*'}, until: 9999-12-31T23:59:59-23:59}]",
    "prices: {'/': {}, 'a/': 1, null: 2}",
    "prompts: {p: {file: {}}}",
    "defaults: {interval: 1e999, timeout: 99999999999999999999999999999999999999}",
    "agent: !!binary aGVsbG8=",
    "agent: !!set {a, b}",
    "x: " + "${" * 50,
    "\ufeffagent: x",
    "\t\t",
]


@pytest.mark.parametrize("text", GARBAGE)
def test_garbage_never_raises_anything_but_config_error(tmp_path, text):
    try:
        load_config_text(text, tmp_path, {})
    except ConfigError as exc:
        assert all("\n" not in line for line in exc.errors)


def test_recursive_alias_reports_depth():
    assert any("nested more than" in line for line in errors("a: &a [*a]"))


# ------------------------------------------------------------- fuzzing
_KEYS = ["database", "agent", "defaults", "prompts", "providers", "checks", "alerts", "notifiers", "silences", "prices",
         "retention", "interval", "timeout", "ttft_timeout", "messages", "file", "max_tokens", "protocol", "api_key",
         "regions", "models", "headers", "params", "options", "name", "metric", "kind", "above", "match", "until",
         "type", "url", "urls", "severities", "input", "output", "raw", "provider", "role", "content"]  # fmt: skip
_WORDS = ["5m", "50%", "-1s", "0", "1e999", "${X}", "${X:-1}", "$${", "${", "http://h/v1", "ftp://x", "openai-chat",
          "sim", "fast", "short", "local", "ttft_ms", "error_rate", "threshold", "regression", "webhook", "log",
          "2026-01-01T00:00:00Z", "../x", "/etc/passwd", "sk-abcdefghijkl", "p.txt", "user", "*"]  # fmt: skip
_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=12), st.sampled_from(_WORDS)
)
_trees = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEYS) | st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


def _paths(tree, prefix=()):
    yield prefix
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            yield from _paths(v, (*prefix, i))


_DESIGN_TREE = yaml.safe_load(DESIGN_EXAMPLE)
_DESIGN_PATHS = list(_paths(_DESIGN_TREE))[1:]


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory):
    base = tmp_path_factory.mktemp("fuzz")
    (base / "prompts").mkdir()
    (base / "prompts" / "rag-4k.txt").write_text("x")
    (base / "p.txt").write_text("y")
    return base


def _assert_only_config_errors(text, base, env):
    try:
        load_config_text(text, base, env)
    except ConfigError as exc:
        assert exc.errors and all("\n" not in line and ": " in line for line in exc.errors)
        for secret in env.values():
            if len(secret) >= 4:
                assert all(secret not in line for line in exc.errors)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=200))
def test_fuzz_any_text(fuzz_dir, text):
    _assert_only_config_errors(text, fuzz_dir, {})


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tree=_trees)
def test_fuzz_any_tree(fuzz_dir, tree):
    _assert_only_config_errors(yaml.safe_dump(tree), fuzz_dir, {"X": "1"})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.sampled_from(_DESIGN_PATHS), garbage=_trees)
def test_fuzz_one_node_of_the_design_example(fuzz_dir, where, garbage):
    tree = copy.deepcopy(_DESIGN_TREE)
    node = tree
    for step in where[:-1]:
        node = node[step]
    node[where[-1]] = garbage
    _assert_only_config_errors(yaml.safe_dump(tree), fuzz_dir, {**DESIGN_ENV, "X": "1"})


def test_firsttoken_variables_are_not_secrets_by_name():
    # "TOKEN" hides inside "FIRSTTOKEN": a regression turned every agent name into ***.
    from monitor.config.interpolation import is_secret_name

    assert not is_secret_name("FIRSTTOKEN_AGENT") and not is_secret_name("FIRSTTOKEN_DATABASE_URL")
    assert all(is_secret_name(n) for n in ("OPENAI_API_KEY", "APIKEY", "GITHUB_TOKEN", "WEBHOOK_SECRET", "DB_PASSWORD"))
