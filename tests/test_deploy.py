"""The deployment files stay consistent with the code (no Docker engine runs here)."""

from __future__ import annotations

from pathlib import Path

import yaml

from monitor.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent


def test_compose_has_the_four_roles_wired_in_order():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = {name: s for name, s in compose["services"].items() if "profiles" not in s}
    assert set(services) == {"postgres", "migrate", "monitor", "dashboard"}
    assert services["migrate"]["command"][:2] == ["db", "upgrade"]
    assert services["monitor"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert "FIRSTTOKEN_DASHBOARD_DATABASE_URL" in services["dashboard"]["environment"]
    assert "dashboard:" in services["dashboard"]["environment"]["FIRSTTOKEN_DASHBOARD_DATABASE_URL"]


def test_every_compose_command_parses_with_the_real_cli():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    parser = build_parser()
    for name in ("migrate", "monitor", "dashboard"):
        args = parser.parse_args(compose["services"][name]["command"])
        assert args.command in ("db", "run", "dashboard")


def test_dockerfile_copies_what_exists():
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if line.startswith("COPY "):
            for source in line.split()[1:-1]:
                assert (ROOT / source).exists(), source
