"""The Troubleshooting page's messages are the ones firsttoken prints. Each titled ```console block of
docs/troubleshooting.md is run here, `$ ` line after line, in a scratch directory set up as its title
says (the snippet test leaves titled blocks to their page's own test); every line shown under a
command must be printed by it, `…` standing for what varies. A command shown without output must
exit 0."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "troubleshooting.md").read_text()
FLAT = " ".join(PAGE.split())  # the page's prose, line breaks as spaces
BLOCK = re.compile(r'^```console title="([^"]+)"\n(.*?)^```', re.S | re.M)

BASE = """
providers:
  openai:
    protocol: openai-chat
    api_key: ${OPENAI_API_KEY}
    regions: {global: "https://api.openai.com/v1"}
    models: [gpt-4o-mini]
prompts:
  short: {messages: [{role: user, content: "Say hi."}], max_tokens: 16}
checks:
  - {providers: [openai], prompts: [short]}
"""
WITH_FILE = BASE.replace("prompts:\n", "prompts:\n  rag-2k: {file: prompts/rag-2k.txt, max_tokens: 64}\n").replace(
    "prompts: [short]", "prompts: [short, rag-2k]"
)

# What each block's title says its directory holds.
SETUPS = {
    "an empty directory": None,
    "api_key: ${OPENAI_API_KEY}, the variable unset": BASE,
    "prompts: {rag-2k: {file: prompts/rag-2k.txt}}, no such file": WITH_FILE,
    "FIRSTTOKEN_AGENT='eu west' and FIRSTTOKEN_DATABASE_URL=mysql://db/firsttoken": BASE,
    "bad values": BASE,
    "a new SQLite database": BASE,
}
BLOCKS = {m.group(1): m.group(2) for m in BLOCK.finditer(PAGE)}


def test_every_block_has_its_setup():
    assert set(BLOCKS) == set(SETUPS)


def _as_pattern(line: str) -> re.Pattern:
    return re.compile("^" + ".*".join(re.escape(part) for part in line.split("…")) + "$")


@pytest.mark.parametrize("title", sorted(SETUPS))
def test_the_block_prints_what_the_page_shows(title: str, tmp_path: Path) -> None:
    if SETUPS[title] is not None:
        (tmp_path / "firsttoken.yaml").write_text(SETUPS[title])
    env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTTOKEN_") and k != "OPENAI_API_KEY"}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    steps: list[tuple[str, list[str]]] = []
    for line in BLOCKS[title].splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif line.strip():
            steps[-1][1].append(line.rstrip())
    assert steps
    for command, shown in steps:
        done = subprocess.run(
            ["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
        )
        printed = [line.rstrip() for line in (done.stdout + done.stderr).splitlines()]
        assert "Traceback" not in done.stderr, done.stderr
        if not shown:
            assert done.returncode == 0, f"`{command}` exited {done.returncode}: {done.stderr}"
        for line in shown:
            pattern = _as_pattern(line)
            assert any(pattern.match(p) for p in printed), f"`{command}` no longer prints:\n{line}\nbut:\n" + "\n".join(
                printed
            )
        if shown and not shown[0].startswith("sqlite:///"):  # an error shown: a non-zero exit
            assert done.returncode != 0, f"`{command}` exited 0"


def test_the_mcp_answers_and_health_problems_are_the_codes_own():
    """The /mcp bodies and /healthz problems the page quotes, against the constants that make them."""
    from monitor.http import mcp
    from monitor.mcp_server import http

    for body in (mcp.OPEN_REFUSED, mcp.UNAVAILABLE, http._UNAUTHORIZED):
        assert f"`{body.decode().strip()}`" in FLAT
    service = (ROOT / "monitor" / "agent" / "service.py").read_text()
    for problem in (
        "writer is stuck: no successful write while samples wait",
        "the database is not keeping up or is down",
    ):
        assert problem in service and problem in FLAT
    assert "SPOOL_UNHEALTHY_BYTES = 64 * 1024 * 1024" in service and "past 64 MiB" in FLAT
    ui = (ROOT / "dashboard" / "ui.py").read_text()
    assert "No samples in this database yet. Start the service with `firsttoken run` " in ui
    assert "**No dashboard data:** {problem}" in ui and "**The database is not answering.** {exc}" in ui
    assert '"unhealthy: cannot reach providers"' in (ROOT / "dashboard" / "agent_rows.py").read_text()
