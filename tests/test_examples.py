"""Every config in examples/ works where a reader copies it: alone, as firsttoken.yaml, in a fresh directory.

`firsttoken check-config` (no `--config`: the copy is ./firsttoken.yaml) must exit 0 with no
credential set, as in CI, and print no secret once they are set. The editor line at the top of
each example must still point at a schema after the copy, once `firsttoken schema` has written it
there as the README says.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}")
SCHEMA_LINE = re.compile(r"^# yaml-language-server: \$schema=(\S+)$")
ALL = sorted(p.name for p in EXAMPLES.glob("*.yaml"))


def clean_env() -> dict[str, str]:
    """The environment without any firsttoken setting, provider key or notifier secret of the machine's."""
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("FIRSTTOKEN_") and not k.endswith(("_API_KEY", "_SECRET", "_ROUTING_KEY", "_URL"))
    }


def dummy_env(text: str) -> dict[str, str]:
    """A value for each variable the file needs (those with a default are left unset: the default must load)."""
    env = clean_env()
    for name, default in VARIABLE.findall(text):
        if default:
            continue
        env[name] = "slack://T000/B000/dummydummydummy" if name.endswith("_APPRISE_URL") else f"dummy-{name.lower()}"
    return env


def firsttoken(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "monitor", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=60
    )


def copied(name: str, tmp_path: Path) -> Path:
    """`cp examples/NAME firsttoken.yaml` in an empty directory: the file alone, nothing beside it."""
    shutil.copy(EXAMPLES / name, tmp_path / "firsttoken.yaml")
    return tmp_path


@pytest.mark.parametrize("name", ALL)
def test_example_loads_alone_in_a_fresh_directory_without_credentials(name, tmp_path):
    here = copied(name, tmp_path)
    env = clean_env() | {"PYTHONPATH": str(EXAMPLES.parent)}
    done = firsttoken("check-config", cwd=here, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "config: firsttoken.yaml" in done.stdout and "TARGET" in done.stdout
    unset = [line for line in done.stdout.splitlines() if " is not set (needed by " in line]
    for line in unset:  # only credentials may be missing, each named with the commands that need it
        assert line.startswith("firsttoken.yaml: providers.") or line.startswith("firsttoken.yaml: notifiers[")


@pytest.mark.parametrize("name", ALL)
def test_example_prints_no_secret_once_they_are_set(name, tmp_path):
    here = copied(name, tmp_path)
    env = dummy_env((EXAMPLES / name).read_text()) | {"PYTHONPATH": str(EXAMPLES.parent)}
    done = firsttoken("check-config", cwd=here, env=env)
    assert done.returncode == 0, done.stderr
    assert "dummy-" not in done.stdout + done.stderr  # keys are secrets: check-config never prints them
    assert " is not set " not in done.stdout


@pytest.mark.parametrize("name", ALL)
def test_the_editor_line_still_finds_the_schema_after_the_copy(name, tmp_path):
    here = copied(name, tmp_path)
    first = (here / "firsttoken.yaml").read_text().splitlines()[0]
    m = SCHEMA_LINE.match(first)
    assert m, f"{name}: first line is not the yaml-language-server schema line: {first!r}"
    env = clean_env() | {"PYTHONPATH": str(EXAMPLES.parent)}
    done = subprocess.run(
        f"{sys.executable} -m monitor schema > firsttoken.schema.json", shell=True, cwd=here, env=env, timeout=60
    )
    assert done.returncode == 0
    schema = json.loads((here / m.group(1)).read_text())  # the line names the file the README's command wrote
    assert "providers" in schema["properties"]
    assert (
        EXAMPLES / m.group(1)
    ).is_file()  # and in examples/, the one shipped beside it (tests/config/test_editor.py)


def test_the_sre_example_shows_the_matrix_per_agent_and_pins_the_vllm(tmp_path):
    """docs/howto-sre-example.md: cloud providers from both vantage points, the vLLM from us-east only."""
    here = copied("sre-two-regions.yaml", tmp_path)
    done = firsttoken("check-config", cwd=here, env=clean_env() | {"PYTHONPATH": str(EXAMPLES.parent)})
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines() if line.startswith(("us-", "eu-", "("))}
    assert rows["us-east"][1:4] == ["10", "216", "anthropic,"] and rows["us-east"][-1] == "vllm"
    assert rows["eu-west"][1:] == ["8", "96", "anthropic,", "openai"]
    assert rows["(any"][2:4] == ["0", "0"]  # a third agent started by mistake probes nothing
    vllm = [line for line in done.stdout.splitlines() if line.startswith("vllm/")]
    assert len(vllm) == 2 and all(line.split()[-1] == "us-east" for line in vllm)
    notifiers = [line for line in done.stdout.splitlines() if "notifiers[" in line]
    assert notifiers == ["firsttoken.yaml: notifiers[0].routing_key: ${PD_ROUTING_KEY} is not set (needed by run)"]


def test_an_agent_no_check_admits_is_warned_at_start():
    """The SRE example under compose's default agent name (`compose`): run says it probes nothing."""
    from monitor.commands.run import idle_agent_warning
    from monitor.config import DEFER, load_config

    path = EXAMPLES / "sre-two-regions.yaml"
    assert idle_agent_warning(load_config(path, env={"FIRSTTOKEN_AGENT": "eu-west"}, secrets=DEFER)) is None
    warning = idle_agent_warning(load_config(path, env={"FIRSTTOKEN_AGENT": "compose"}, secrets=DEFER))
    assert warning == (
        "agent 'compose' probes no target: every check names its agents (eu-west, us-east); "
        "set FIRSTTOKEN_AGENT to one of them"
    )
    assert idle_agent_warning(load_config(EXAMPLES / "openai-anthropic-gemini.yaml", env={}, secrets=DEFER)) is None


@pytest.fixture
def simulator():
    """The project's simulated providers on a free port, accepting only one key."""
    process = subprocess.Popen(
        [sys.executable, "-m", "monitor", "simulate", "--port", "0", "--api-key", "vllm-test-key"],
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ | {"PYTHONPATH": str(EXAMPLES.parent)},
    )
    try:
        m = re.search(r"http://127\.0\.0\.1:(\d+)", process.stdout.readline())
        assert m, "the simulator did not start"
        yield f"http://127.0.0.1:{m.group(1)}"
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_the_sre_example_probes_its_vllm_with_only_the_vllm_key(simulator, tmp_path):
    """docs/howto-sre-example.md: `probe --target 'vllm/*'` from us-east with VLLM_API_KEY alone set (no
    cloud key, no PagerDuty key); the simulator stands in for the vLLM at its private address."""
    here = copied("sre-two-regions.yaml", tmp_path)
    config = here / "firsttoken.yaml"
    config.write_text(config.read_text().replace("http://vllm.us-east.internal:8000", simulator))
    env = clean_env() | {"PYTHONPATH": str(EXAMPLES.parent), "VLLM_API_KEY": "vllm-test-key"}
    done = firsttoken("probe", "--target", "vllm/*", cwd=here, env=env)
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith("vllm/")]
    assert sorted((r[0].rsplit(":", 1)[1], r[1]) for r in rows) == [("rag-2k", "ok"), ("short", "ok")]
    assert "vllm-test-key" not in done.stdout + done.stderr
