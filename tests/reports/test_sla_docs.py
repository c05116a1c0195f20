"""docs/reports.md's SLA section, run: its contract loads as written, its two commands write what the
page shows (on a planted outage, the provider renamed to the page's)."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import subprocess
from datetime import timedelta
from pathlib import Path

import yaml

from monitor.config import load_config_text
from monitor.sample import write_csv
from tests.commandline import firsttoken_cli
from tests.docs_blocks import fenced, section
from tests.reports.test_sla_month import MONTH, planted

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "reports.md").read_text()
SECTION = section(PAGE, "## SLA report", "## Weekly report")


def _blocks(kind: str) -> list[str]:
    return fenced(SECTION, kind)


def test_the_contract_loads_and_the_commands_write_the_report(tmp_path):
    (config_block,) = _blocks("yaml")
    (console,) = _blocks("console")
    spec = yaml.safe_load(config_block)
    (provider,) = spec["providers"]
    (model,) = spec["providers"][provider]["models"]
    (region,) = spec["providers"][provider]["regions"]
    spec |= {"prompts": {"short": {"messages": [{"role": "user", "content": "hi"}]}},
             "checks": [{"providers": [provider], "prompts": ["short"]}]}  # fmt: skip
    config = load_config_text(json.dumps(spec), tmp_path, {})
    (contract,) = config.providers[provider].contracts
    assert contract.uptime.credit(0.985).credit == 0.25 and contract.latency.minute_ok.tps_at_least == 50

    renamed = [
        dataclasses.replace(s, provider=provider, model=model, region=region, target=f"{provider}/{model}@{region}:{s.prompt}")
        for s in planted()
        if MONTH + timedelta(days=9) <= s.started_at < MONTH + timedelta(days=13)  # Nov 10-13: 20 minutes down
    ]  # fmt: skip
    out = io.StringIO()
    write_csv(renamed, out)
    (tmp_path / "planted.csv").write_text(out.getvalue())
    (tmp_path / "firsttoken.yaml").write_text(json.dumps(spec))

    def run(*argv: str) -> subprocess.CompletedProcess:
        return firsttoken_cli(tmp_path, f"sqlite:///{tmp_path / 'ft.db'}", *argv)

    assert run("db", "upgrade").returncode == 0
    assert run("samples", "import", "planted.csv").returncode == 0
    lines = console.strip().splitlines()
    commands = [(line[2:], lines[i + 1]) for i, line in enumerate(lines) if line.startswith("$ ")]
    assert len(commands) == 2
    for command, shown in commands:
        argv = command.split()
        assert argv[0] == "firsttoken"
        done = run(*argv[1:])
        assert done.returncode == 0, (command, done.stderr)
        written = done.stderr.strip().splitlines()[-1]
        assert re.fullmatch(r"wrote \S+ \([\d,]+ bytes\)", written) and written.split(" (")[0] == shown.split(" (")[0]
    assert (tmp_path / "sla-2026-11.pdf").read_bytes().startswith(b"%PDF-")
    report = json.loads((tmp_path / "sla.json").read_text())
    (result,) = report["contracts"]
    assert result["provider"] == provider and result["uptime"]["minutes_bad"] == 20
