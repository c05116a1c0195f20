"""`firsttoken dashboard`: the environment the Streamlit child gets, and the CLI wiring."""

from __future__ import annotations

from pathlib import Path

from dashboard import launch as dashboard
from monitor.cli import build_parser


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


def test_dashboard_url_wins_over_the_config_and_keys_are_not_needed(tmp_path, monkeypatch):
    from dashboard.settings import load_settings

    config = tmp_path / "firsttoken.yaml"
    config.write_text(
        "database: sqlite:///from-config.db\n"
        "providers:\n  openai:\n    protocol: openai-chat\n    api_key: ${OPENAI_API_KEY}\n"
        "    regions: {global: 'https://api.openai.com/v1'}\n    models: [gpt-4o-mini]\n"
        "prompts:\n  short:\n    messages: [{role: user, content: hi}]\n    max_tokens: 8\n"
        "checks:\n  - providers: [openai]\n    prompts: [short]\n"
        "prices:\n  openai/gpt-4o-mini: {input: 0.15, output: 0.60}\n"
    )
    env = {"FIRSTTOKEN_CONFIG": str(config)}  # no OPENAI_API_KEY
    settings = load_settings(env)
    assert settings.database_url == "sqlite:///from-config.db"
    assert settings.prices == {"openai/gpt-4o-mini": (0.15, 0.60)}
    assert load_settings({**env, "FIRSTTOKEN_DATABASE_URL": "sqlite:///env.db"}).database_url == "sqlite:///env.db"
    both = {
        **env,
        "FIRSTTOKEN_DATABASE_URL": "sqlite:///env.db",
        "FIRSTTOKEN_DASHBOARD_DATABASE_URL": "sqlite:///ro.db",
    }
    assert load_settings(both).database_url == "sqlite:///ro.db"
