"""Least-privilege secrets (issue 13): only commands that call providers or notifiers need their
credentials; every other command, and check-config, runs with them unset."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from monitor.cli import needs_secrets
from tests.config_helpers import DESIGN_EXAMPLE, errors, minimal

REPO = Path(__file__).resolve().parents[2]
CREDENTIALS = ("OPENAI_API_KEY", "WEBHOOK_SECRET", "SLACK_APPRISE_URL")


def _config(tmp_path: Path, **changes) -> Path:
    data = minimal(database=f"sqlite:///{tmp_path / 'ft.db'}", **changes)
    data["providers"]["sim"]["api_key"] = "${OPENAI_API_KEY}"
    data["notifiers"] = [
        {"name": "hooks", "type": "webhook", "url": "http://127.0.0.1:9/x", "secret": "${WEBHOOK_SECRET}"},
        {"name": "chat", "type": "apprise", "urls": ["${SLACK_APPRISE_URL}"]},
    ]
    path = tmp_path / "firsttoken.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _firsttoken(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in CREDENTIALS and not k.startswith("FIRSTTOKEN_")}
    env["PYTHONPATH"] = str(REPO)
    cmd = [sys.executable, "-m", "monitor", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def test_commands_that_call_no_provider_run_without_credentials(tmp_path):
    config = str(_config(tmp_path))
    (tmp_path / "s.csv").write_text("timestamp,value\n" + "".join(f"{60 * i},100\n" for i in range(50)))
    for args in (["db", "upgrade"], ["samples"], ["silence", "list"], ["backtest", "--csv", str(tmp_path / "s.csv")]):
        done = _firsttoken(*args, "--config", config, cwd=tmp_path)
        assert done.returncode == 0, (args, done.stderr)
        assert "is not set" not in done.stderr


def test_run_needs_every_credential_it_may_send(tmp_path):
    config = str(_config(tmp_path))
    done = _firsttoken("run", "--listen", "127.0.0.1:0", "--config", config, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"{config}: providers.sim.api_key: environment variable OPENAI_API_KEY is not set" in done.stderr
    assert f"{config}: notifiers[0].secret: environment variable WEBHOOK_SECRET is not set" in done.stderr


def test_probe_needs_only_the_keys_of_the_providers_it_calls(tmp_path):
    config = str(_config(tmp_path))
    done = _firsttoken("probe", "--config", config, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"{config}: providers.sim.api_key: environment variable OPENAI_API_KEY is not set (probe sends it to sim)"
    ]
    # The key set, the notifiers' secrets still unset: the probe runs (the provider's port is closed: exit 1).
    Path(config).write_text(Path(config).read_text().replace("127.0.0.1:8400", "127.0.0.1:9"))
    env = {"OPENAI_API_KEY": "sk-test"}
    done = subprocess.run(
        [sys.executable, "-m", "monitor", "probe", "--config", config],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k not in CREDENTIALS and not k.startswith("FIRSTTOKEN_")} | env,
    )
    assert done.returncode == 1, done.stderr
    assert "is not set" not in done.stderr + done.stdout and "sim/fast@local:short" in done.stdout


def test_check_config_reports_unset_credentials_and_exits_0(tmp_path):
    config = _config(tmp_path)
    done = _firsttoken("check-config", "--config", str(config), cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == ""
    assert "sim/fast@local:short" in done.stdout
    assert done.stdout.splitlines()[-3:] == [
        f"{config}: providers.sim.api_key: ${{OPENAI_API_KEY}} is not set (needed by run and probe)",
        f"{config}: notifiers[0].secret: ${{WEBHOOK_SECRET}} is not set (needed by run)",
        f"{config}: notifiers[1].urls[0]: ${{SLACK_APPRISE_URL}} is not set (needed by run)",
    ]


def test_an_unset_variable_outside_a_credential_is_still_an_error(tmp_path):
    config = _config(tmp_path)
    data = yaml.safe_load(config.read_text())
    data["providers"]["sim"]["regions"]["local"] = "${SIM_URL}"
    config.write_text(yaml.safe_dump(data))
    for args in (["check-config"], ["samples"]):
        done = _firsttoken(*args, "--config", str(config), cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert f"{config}: providers.sim.regions.local: environment variable SIM_URL is not set" in done.stderr


def test_defer_mode_in_the_library(tmp_path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "rag-4k.txt").write_text("a long document")
    from monitor.config import DEFER, load_config_text, secrets_policy

    config = load_config_text(DESIGN_EXAMPLE, tmp_path, {}, secrets=DEFER)
    assert dict(config.unset_secrets) == {
        "providers.openai.api_key": ("OPENAI_API_KEY",),
        "providers.anthropic.api_key": ("ANTHROPIC_API_KEY",),
        "providers.openrouter.api_key": ("OPENROUTER_API_KEY",),
        "notifiers[0].secret": ("WEBHOOK_SECRET",),
        "notifiers[1].routing_key": ("PD_ROUTING_KEY",),
        "notifiers[2].urls[0]": ("SLACK_APPRISE_URL",),
    }
    assert len(config.targets) == 7 and repr(config.targets[0].api_key) == "'***'"
    with secrets_policy(DEFER):
        assert load_config_text(DESIGN_EXAMPLE, tmp_path, {}).unset_secrets == config.unset_secrets
    assert any("OPENAI_API_KEY is not set" in line for line in errors(DESIGN_EXAMPLE, tmp_path, {}))  # the default


@pytest.mark.parametrize(
    ("argv", "needed"),
    [
        (["run"], True),
        (["probe"], False),  # it checks its providers' keys itself (monitor/commands/probe.py)
        (["demo", "--with-real-providers"], True),
        (["demo"], False),
        (["db", "upgrade"], False),
        (["samples"], False),
        (["silence", "list"], False),
        (["backtest", "--csv", "x"], False),
        (["dashboard"], False),
        (["check-config"], False),
    ],
)
def test_which_commands_resolve_credentials(argv, needed):
    args = argparse.Namespace(command=argv[0], with_real_providers="--with-real-providers" in argv)
    assert needs_secrets(args) is needed
    assert needs_secrets(argparse.Namespace(command="routes")) is False  # a new command: none unless named


def test_compose_hands_provider_keys_to_the_monitor_service_only():
    """They come from firsttoken.env (deploy/firsttoken.env.example), which only `monitor` reads."""
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    for name, service in compose["services"].items():
        env = service.get("environment") or {}
        keys = {k for k in env if k.endswith("_API_KEY") or k in ("WEBHOOK_SECRET", "PD_ROUTING_KEY")}
        assert not keys, (name, keys)
        assert ("env_file" in service) == (name == "monitor"), name
    assert compose["services"]["monitor"]["env_file"] == ["firsttoken.env"]
