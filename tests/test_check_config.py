"""`firsttoken check-config`: the expanded matrix on success, every error on failure, never a secret."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from monitor.commands.check_config import check_config_command, safe_database_url
from tests.config_helpers import DESIGN_ENV, design_dir, dump, minimal

__all__ = ["design_dir"]
REPO = Path(__file__).resolve().parents[1]


def _run(path: Path | str, env: dict[str, str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = check_config_command(str(path), out, err, env)
    return code, out.getvalue(), err.getvalue()


def test_prints_the_matrix_and_a_summary(design_dir):
    code, out, err = _run(design_dir / "firsttoken.yaml", DESIGN_ENV)
    assert code == 0 and err == ""
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("TARGET"))
    assert header.split() == ["TARGET", "PROTOCOL", "BASE", "URL", "INTERVAL", "TIMEOUT", "TTFT_TIMEOUT", "AGENTS"]
    row = next(line for line in lines if line.startswith("openai/gpt-4o-mini@global:short "))
    assert row.split() == ["openai/gpt-4o-mini@global:short", "openai-chat", "https://api.openai.com/v1", "2m", "1m",
                           "30s", "*"]  # fmt: skip
    assert "bedrock/anthropic.claude-3-5-haiku-20241022-v1:0@us-east-1:short" in out
    assert "7 targets (7 for agent local), 4 providers, 2 prompts, 3 alert rules, 3 notifiers, 1 silence" in lines
    assert "note: provider 'openrouter' is in no check, so nothing probes it" in lines
    for secret in DESIGN_ENV.values():
        assert secret not in out


def test_secrets_in_urls_are_masked(tmp_path):
    data = minimal(database="postgresql+psycopg://mon:pw@db/ft")
    data["providers"]["sim"]["regions"]["local"] = "https://gen.example.com/v1?key=${GEMINI_API_KEY}"
    data["checks"][0]["agents"] = ["eu-1"]
    path = tmp_path / "c.yaml"
    path.write_text(dump(data))
    code, out, _ = _run(path, {"GEMINI_API_KEY": "gem-secret-value"})
    assert code == 0
    assert "gem-secret-value" not in out and "https://gen.example.com/v1?key=***" in out
    assert "database: postgresql+psycopg://mon:***@db/ft" in out and ":pw@" not in out
    assert "eu-1" in out and "1 target (0 for agent local)" in out


def test_errors_go_to_stderr_prefixed_with_the_file(tmp_path):
    data = minimal()
    data["providers"]["sim"]["regions"]["local"] = "${ENDPOINT_SECRET}"
    data["checks"][0]["providers"] = ["sim", "smi"]
    path = tmp_path / "firsttoken.yaml"
    path.write_text(dump(data))
    code, out, err = _run(path, {"ENDPOINT_SECRET": "ftp://secret-host-value"})
    assert code == 2 and out == ""
    assert err.splitlines() == [
        f"{path}: providers.sim.regions.local: not a URL (expected http://host/... or https://host/...), got '***'",
        f"{path}: checks[0].providers[1]: unknown provider 'smi' (did you mean 'sim'?)",
    ]
    assert "secret-host-value" not in err


def test_missing_file(tmp_path):
    code, _, err = _run(tmp_path / "none.yaml", {})
    assert code == 2 and err == f"{tmp_path / 'none.yaml'}: cannot read the file: No such file or directory\n"


def test_safe_database_url():
    assert safe_database_url("sqlite:///x.db") == "sqlite:///x.db"
    assert safe_database_url("postgresql://u:p@h:5432/d") == "postgresql://u:***@h:5432/d"
    assert safe_database_url("postgresql://u@h/d") == "postgresql://u@h/d"


@pytest.mark.skipif(not (REPO / "monitor" / "cli.py").exists(), reason="monitor/cli.py not written yet")
def test_cli_check_config(design_dir):
    env = {**os.environ, **DESIGN_ENV, "PYTHONPATH": str(REPO)}
    env.pop("FIRSTTOKEN_DATABASE_URL", None)
    env.pop("FIRSTTOKEN_AGENT", None)
    cmd = [sys.executable, "-m", "monitor", "check-config", "--config", str(design_dir / "firsttoken.yaml")]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "openai/gpt-4o@global:rag-4k" in done.stdout and "7 targets" in done.stdout
    for secret in DESIGN_ENV.values():
        assert secret not in done.stdout + done.stderr

    # A credential need not be set to check the rest (CI has no keys): a warning naming it, exit 0.
    del env["OPENAI_API_KEY"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO, timeout=60)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.strip().splitlines()[-1] == (
        f"{design_dir / 'firsttoken.yaml'}: providers.openai.api_key: ${{OPENAI_API_KEY}} is not set"
        " (needed by run and probe)"
    )


def test_the_matrix_per_agent_appears_once_a_check_pins_agents(tmp_path):
    data = minimal(agent="us-east")
    data["providers"]["vllm"] = {
        "protocol": "openai-chat",
        "regions": {"dc": "http://10.0.0.5:8000/v1"},
        "models": ["l"],
    }
    path = tmp_path / "c.yaml"
    path.write_text(dump(data))
    _, out, _ = _run(path, {})
    assert "PROBES/H" not in out  # every target on every agent: nothing per agent to tell
    data["checks"].append({"providers": ["vllm"], "prompts": ["short"], "agents": ["us-east"], "interval": "1m"})
    path.write_text(dump(data))
    code, out, _ = _run(path, {})
    lines = out.splitlines()
    assert code == 0
    table = lines[lines.index(next(line for line in lines if line.startswith("AGENT"))) :][:4]
    assert [line.split() for line in table] == [
        ["AGENT", "TARGETS", "PROBES/H", "PROVIDERS"],
        ["us-east", "2", "72", "sim,", "vllm"],  # 12 an hour at 5m, 60 at 1m
        ["(any", "other)", "1", "12", "sim"],
        [],
    ]
