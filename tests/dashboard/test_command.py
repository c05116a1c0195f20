"""`firsttoken dashboard`: the environment the Streamlit child gets, and the CLI wiring."""

from __future__ import annotations

from pathlib import Path

from monitor.cli import build_parser
from monitor.commands import dashboard


def test_app_path_is_the_installed_dashboard_app():
    path = dashboard.app_path()
    assert path.name == "app.py" and (path.parent / "pages" / "health.py").is_file()


def test_child_environment_names_config_and_database(tmp_path, monkeypatch):
    monkeypatch.delenv("FIRSTTOKEN_DASHBOARD_DATABASE_URL", raising=False)
    config = tmp_path / "firsttoken.yaml"
    env = dashboard.dashboard_env(config, "postgresql+psycopg://ro@db/firsttoken")
    assert env["FIRSTTOKEN_CONFIG"] == str(config.resolve())
    assert env["FIRSTTOKEN_DASHBOARD_DATABASE_URL"] == "postgresql+psycopg://ro@db/firsttoken"
    assert env["STREAMLIT_BROWSER_GATHER_USAGE_STATS"] == "false"
    assert str(Path(dashboard.__file__).resolve().parents[2]) in env["PYTHONPATH"]


def test_cli_parses_port_host_and_no_browser():
    args = build_parser().parse_args(["dashboard", "--port", "8600", "--host", "0.0.0.0", "--no-browser"])
    assert (args.command, args.port, args.host, args.no_browser) == ("dashboard", 8600, "0.0.0.0", True)


def test_wait_until_up_gives_up_on_a_closed_port():
    assert dashboard.wait_until_up(1, timeout_s=0.5) is False
