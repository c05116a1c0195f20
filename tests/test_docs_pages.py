"""Pages that list what the code has: the Upgrading page's table names every migration, and the
Security page names every path the listen address routes and every secret variable."""

from __future__ import annotations

import re
from pathlib import Path

import monitor.http.app as app
from monitor.envvars import REGISTRY

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
