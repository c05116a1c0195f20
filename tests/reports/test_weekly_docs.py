"""docs/reports.md's Weekly report section, run: its `reports:` entry loads, its `--send` command mails
the planted week to a real SMTP server and prints the line the page shows, and its HTML and PDF
commands write the files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from monitor.storage import migrate
from monitor.storage.db import make_engine
from tests.docs_blocks import fenced, section
from tests.mailserver import MailServer
from tests.reports import weekly_seed as seed

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "reports.md").read_text()
SECTION = section(PAGE, "## Weekly report")


def _blocks(kind: str) -> list[str]:
    return fenced(SECTION, kind)


def test_the_pages_commands_write_and_mail_the_report(tmp_path):
    (config_block,) = _blocks("yaml")
    (console,) = _blocks("console")
    shown = yaml.safe_load(config_block)
    (entry,) = shown["reports"]
    url = f"sqlite:///{tmp_path / 'ft.db'}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    seed.plant(engine, seed.config(tmp_path))
    engine.dispose()
    with MailServer() as server:
        # The page's entry as written, with the planted providers and a mail server on loopback.
        entry["providers"] = ["alpha", "beta"]
        smtp = {"host": "127.0.0.1", "port": server.port, "starttls": False, "from": shown["smtp"]["from"]}
        (tmp_path / "firsttoken.yaml").write_text(
            json.dumps({"database": url, **seed.spec(smtp=smtp, reports=[entry])})
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTTOKEN_")}
        lines = console.strip().splitlines()
        commands = [line[2:] for line in lines if line.startswith("$ ")]
        assert len(commands) == 3
        for command in commands:
            argv = command.split()
            assert argv[0] == "firsttoken"
            done = subprocess.run(
                [sys.executable, "-m", "monitor", *argv[1:]], cwd=tmp_path, env=env, capture_output=True, text=True,
                timeout=120,
            )  # fmt: skip
            assert done.returncode == 0, (command, done.stderr)
        (mail,) = server.wait_for(1)
    expected = lines[-1]  # the line `--send` prints, with the page's server
    assert done.stdout.strip() == expected.replace("smtp.example.com:587", f"127.0.0.1:{server.port}")
    assert mail.recipients == tuple(entry["to"]) and "2026-W48" in mail.message["Subject"]
    assert (tmp_path / "weekly.html").read_text().startswith("<!DOCTYPE html>")
    assert (tmp_path / "weekly.pdf").read_bytes().startswith(b"%PDF")
