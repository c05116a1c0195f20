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


def test_beyond_loopback_with_no_sign_in_it_refuses_to_start(tmp_path):
    """Nothing is open to the network by default: `--host 0.0.0.0` with no password or OIDC exits 2 with one
    line before anything starts; `--no-sign-in` says the openness is meant. The demo keeps the same rule."""
    from tests.commandline import firsttoken_cli

    url = f"sqlite:///{tmp_path / 'unused.db'}"
    for command in (["dashboard", "--no-browser"], ["demo", "--no-browser", "--backfill", "0s"]):
        done = firsttoken_cli(tmp_path, url, *command, "--host", "0.0.0.0", "--port", "1", timeout_s=60)
        assert done.returncode == 2, done.stderr
        (line,) = [x for x in done.stderr.splitlines() + done.stdout.splitlines() if "sign-in" in x]
        assert "--host 0.0.0.0" in line and "FIRSTTOKEN_DASHBOARD_PASSWORD" in line and "--no-sign-in" in line


def test_which_addresses_are_open_to_the_network(tmp_path):
    from dashboard.settings import oidc_in_secrets, open_to_the_network

    for host in ("127.0.0.1", "127.0.0.2", "::1", "localhost"):
        assert not open_to_the_network(host, {}, oidc=False), host
    for host in ("0.0.0.0", "::", "10.0.0.5", "dashboard.internal"):
        assert open_to_the_network(host, {}, oidc=False), host
        assert not open_to_the_network(host, {"FIRSTTOKEN_DASHBOARD_PASSWORD": "s3cret"}, oidc=False)
        assert not open_to_the_network(host, {}, oidc=True)
    secrets = tmp_path / "secrets.toml"
    secrets.write_text('[connections.x]\nurl = "y"\n')
    assert not oidc_in_secrets((secrets,))
    secrets.write_text('[auth]\nredirect_uri = "https://d.example/oauth2callback"\n')
    assert oidc_in_secrets((tmp_path / "missing.toml", secrets))
