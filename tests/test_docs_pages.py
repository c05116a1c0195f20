"""Pages that list what the code has: the Upgrading page's table names every migration (and its
downgrade command runs), and the Security page names every path the listen address routes and every
secret variable."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import monitor.http.app as app
from monitor.envvars import REGISTRY
from monitor.storage import migrate
from monitor.storage.db import make_engine

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def test_every_migration_is_in_the_upgrading_table():
    text = (DOCS / "upgrading.md").read_text()
    rows = {line.split(" | ")[0] for line in text.splitlines() if line.startswith("| `")}
    revisions = []
    for path in sorted((ROOT / "migrations" / "versions").glob("0*.py")):
        revision = re.search(r'^revision: str = "([^"]+)"', path.read_text(), re.M).group(1)
        revisions.append(revision)
        assert any(f"`{revision}`" in row for row in rows), f"docs/upgrading.md: add a row for {revision} ({path.name})"
    assert len(revisions) >= 17


def test_every_routed_path_and_secret_is_on_the_security_page():
    text = (DOCS / "security.md").read_text()
    routed = re.findall(r"^\s+(/[\w/<>.,\s-]+?)\s{2,}", app.__doc__, re.M)
    paths = {p.strip() for group in routed for p in group.split(",") if p.strip()}
    paths |= set(app.SUBSCRIPTION_PATHS)
    assert {"/mcp", "/routes", "/metrics", "/healthz", "/status/subscribe"} <= paths
    # `/badge/<p>.svg` is written `/badge/<provider>.svg` there, `/mcp/...` as `/mcp`: compare up to the variable part
    missing = sorted(p for p in paths if f"`{p.split('<')[0].removesuffix('...').rstrip('/')}" not in text)
    assert missing == [], f"docs/security.md: say what guards {missing}"
    secrets = [v.name for v in REGISTRY if v.secret]
    assert [name for name in secrets if f"`{name}`" not in text] == []


def test_the_downgrade_command_shown_runs(tmp_path: Path):
    """The Upgrading page's `python -m monitor.storage.migrate downgrade REV`, run as shown but on a
    scratch SQLite database migrated to the newest revision first."""
    text = (DOCS / "upgrading.md").read_text()
    (block,) = re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M)
    (command,) = [line for line in block.splitlines() if "monitor.storage.migrate downgrade" in line]
    url = f"sqlite:///{tmp_path / 'ft.db'}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    target = command.split()[-1]
    argv = command.split("python ", 1)[1].split()
    env = {**os.environ, "FIRSTTOKEN_DATABASE_URL": url}  # the page's URL is a placeholder
    done = subprocess.run([sys.executable, *argv], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert migrate.current_revision(engine) == target
    engine.dispose()
