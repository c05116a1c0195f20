"""The config `firsttoken demo` writes: a valid, ordinary config; real providers only by `${VAR}`."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import make_url

from monitor.config import load_config_text
from monitor.demo.cast import MODELS, PROVIDERS, long_prompt_text
from monitor.demo.demo_config import FAR_PATH_ENV, LONG_PROMPT_FILE, config_text, real_providers_in, sqlite_url
from monitor.demo.vantage import FAR_AGENT, far_vantage


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / LONG_PROMPT_FILE).parent.mkdir(parents=True)
    (tmp_path / LONG_PROMPT_FILE).write_text(long_prompt_text())
    return tmp_path


def load(text: str, workdir: Path, env: dict[str, str] | None = None):
    return load_config_text(text, base_dir=workdir, env=env or {})


def test_the_cast_is_three_providers_two_models_two_regions_two_prompts_and_a_gateway(workdir):
    text = config_text(simulator_url="http://127.0.0.1:4321", database_url="sqlite:////tmp/x.db")
    config = load(text, workdir)
    # the gateway: one model, two regions, two prompts; cache probes: two models, two regions each
    assert len(config.targets) == 24 + 4 + 4
    router = [t for t in config.targets if t.provider == "sim-router"]
    assert {dict(t.params)["provider"]["order"][0] for t in router} == {"groq"}  # the pinned route
    assert {r.name: r.kind for r in config.alerts}["route-changed"] == "change"
    assert {t.protocol for t in config.targets} == {"openai-chat", "anthropic", "gemini"}
    for provider in PROVIDERS:
        mine = [t for t in config.targets if t.provider == provider.name]
        assert {t.region for t in mine} == set(provider.regions)
        assert {t.model for t in mine} == set(provider.models)
        assert {t.prompt for t in mine if t.prompt != "rag-cached"} == {"short", "rag-4k"}
        for t in mine:
            assert t.base_url.startswith(f"http://127.0.0.1:4321/region/{t.region}")
    assert set(MODELS) == {t.model for t in config.targets}
    assert {t.interval_s for t in config.targets} == {30.0}
    assert [n.type for n in config.notifiers] == ["log"]
    assert {r.name for r in config.alerts} == {
        "ttft-regression",
        "error-rate",
        "ttft-p90-slo",
        "route-changed",
        "build-changed",
        "cache-hit-ratio",
    }
    cached = {(t.provider, t.model) for t in config.targets if t.prompt == "rag-cached"}
    assert cached == {("sim-openai", "gpt-4o-mini"), ("sim-anthropic", "claude-sonnet-4-5")}
    assert config.prompts["rag-cached"].cache and not config.prompts["rag-4k"].cache
    assert config.database_url == "sqlite:////tmp/x.db"


def test_the_long_prompt_is_about_four_thousand_tokens_and_the_short_one_a_sentence(workdir):
    config = load(config_text(simulator_url="http://h:1", database_url="sqlite:///d.db"), workdir)
    long_chars = sum(len(m.content) for m in config.prompts["rag-4k"].messages)
    short_chars = sum(len(m.content) for m in config.prompts["short"].messages)
    assert 15_000 <= long_chars <= 17_000 and short_chars < 100


def test_real_providers_join_only_for_keys_present_and_only_as_references(workdir):
    env = {"OPENAI_API_KEY": "sk-live-SECRET-1", "GOOGLE_API_KEY": "AIza-SECRET-2", "ANTHROPIC_API_KEY": ""}
    real = real_providers_in(env)
    assert [(p.name, var) for p, var in real] == [("openai", "OPENAI_API_KEY"), ("gemini", "GOOGLE_API_KEY")]
    text = config_text(simulator_url="http://h:1", database_url="sqlite:///d.db", real=real)
    assert "SECRET" not in text and "${OPENAI_API_KEY}" in text and "${GOOGLE_API_KEY}" in text
    config = load(text, workdir, env)
    real_targets = [t for t in config.targets if not t.provider.startswith("sim-")]
    assert sorted(t.id for t in real_targets) == [
        "gemini/gemini-2.5-flash-lite@global:short",
        "openai/gpt-4o-mini@global:short",
    ]
    assert {t.interval_s for t in real_targets} == {600.0}
    assert "sk-live-SECRET-1" in config.secrets


def test_both_vantage_points_read_one_file_and_demo_far_takes_its_own_path_to_its_targets(workdir):
    text = config_text(simulator_url="http://127.0.0.1:4321", database_url="sqlite:///d.db")
    near = load(text, workdir)
    far = load(text, workdir, {"FIRSTTOKEN_AGENT": FAR_AGENT, FAR_PATH_ENV: "http://127.0.0.1:5555"})
    assert near.agent == "demo" and far.agent == FAR_AGENT
    assert near.targets_for_agent() == near.targets  # the demo's agent probes everything
    # demo-far probes the targets the backfill gives it, and nothing else (no real provider either).
    mine = far.targets_for_agent()
    assert {t.id for t in mine} == set(far_vantage([t.id for t in near.targets], 0.0, 3600.0).target_ids)
    assert all(t.base_url.startswith("http://127.0.0.1:5555/region/us-east") for t in mine)
    # Unset (the demo's own agent, the dashboard, `firsttoken check-config`), the URL is the direct one.
    assert all(t.base_url.startswith("http://127.0.0.1:4321/region/") for t in near.targets)
    real = real_providers_in({"OPENAI_API_KEY": "sk-x"})
    text = config_text(simulator_url="http://h:1", database_url="sqlite:///d.db", real=real)
    env = {"OPENAI_API_KEY": "sk-x", "FIRSTTOKEN_AGENT": FAR_AGENT}
    assert {t.provider for t in load(text, workdir, env).targets_for_agent()} == {"sim-openai", "sim-anthropic"}


def test_gemini_prefers_its_own_variable():
    real = real_providers_in({"GEMINI_API_KEY": "a", "GOOGLE_API_KEY": "b"})
    assert [(p.name, var) for p, var in real] == [("gemini", "GEMINI_API_KEY")]
    assert real_providers_in({}) == []


def test_odd_paths_cannot_break_the_yaml_or_the_url(workdir):
    path = workdir / 'my "demo": #1' / "demo.db"
    config = load(config_text(simulator_url="http://h:1", database_url=sqlite_url(path)), workdir)
    assert make_url(config.database_url).database == str(path)


def test_the_demos_alert_rounds_are_timed_by_the_config_it_writes(workdir):
    """The demo's own alert timings are in its config's `alerting:` block, which its service's leader jobs read."""
    from monitor.config.schema import Alerting
    from monitor.leader.jobs import leader_jobs

    config = load(config_text(simulator_url="http://h:1", database_url="sqlite:///d.db"), workdir)
    assert config.alerting != Alerting()  # not the defaults: the demo's own
    jobs = leader_jobs(config)
    assert jobs["alerts.evaluate"][0] == config.alerting.evaluate_every_s
    assert jobs["alerts.deliver"][0] == config.alerting.deliver_every_s
