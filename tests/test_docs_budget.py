"""`budget:` is what the Probe kinds page says: a check of the projection as `run` starts (and a line
of `check-config`), not a running cap. Run for real: `firsttoken run` refuses to start, before it
touches the database, and `check-config` reports without failing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "probe-kinds.md").read_text()

CONFIG = """
database: sqlite:///{db}
providers:
  openai:
    protocol: openai-chat
    regions: {{global: "http://127.0.0.1:1/v1"}}
    models: [gpt-4o-mini]
prompts:
  short: {{messages: [{{role: user, content: "Say hi."}}], max_tokens: 64}}
defaults: {{interval: 1m}}
checks:
  - {{providers: [openai], prompts: [short]}}
prices:
  openai/gpt-4o-mini: {{input: 0.15, output: 0.60}}
budget: {{monthly_usd: 0.01, action: {action}}}
"""


def _firsttoken(tmp_path: Path, action: str, *argv: str) -> subprocess.CompletedProcess:
    (tmp_path / "firsttoken.yaml").write_text(CONFIG.format(db=tmp_path / "ft.db", action=action))
    env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTTOKEN_")}
    return subprocess.run(
        [sys.executable, "-m", "monitor", *argv], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )


def test_refuse_stops_run_at_start_with_the_line_the_page_shows(tmp_path: Path) -> None:
    done = _firsttoken(tmp_path, "refuse", "run", "--listen", "127.0.0.1:0")
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("firsttoken run: projected monthly cost $")
    assert line.endswith("exceeds budget.monthly_usd $0.01; not starting (budget.action refuse)")
    assert not (tmp_path / "ft.db").exists()  # before it touches the database
    shown = (
        "exceeds budget.monthly_usd $…; not starting (budget.action refuse)`, exit 2, before it touches the database"
    )
    assert shown in PAGE


def test_check_config_reports_the_budget_and_exits_0(tmp_path: Path) -> None:
    done = _firsttoken(tmp_path, "warn", "check-config")
    assert done.returncode == 0, done.stderr
    assert "budget: $0.01/month, action warn: projection over: warn" in done.stdout
    assert "`budget: $50.00/month, action warn: projection over: warn`" in PAGE
    assert "It does **not** stop or slow probes while they run" in PAGE
