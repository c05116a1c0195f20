"""`firsttoken silence add|list|expire` through the real CLI entry point."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from monitor.alerts.scope import Scope
from monitor.alerts.silences import active_silences
from monitor.cli import main

CONFIG = """
providers:
  bedrock:
    protocol: bedrock-converse
    regions: {eu-west-1: "https://bedrock-runtime.eu-west-1.amazonaws.com"}
    models: [anthropic.claude-3-5-haiku-20241022-v1:0]
prompts:
  short: {messages: [{role: user, content: hi}], max_tokens: 8}
checks:
  - providers: [bedrock]
    prompts: [short]
silences:
  - match: {provider: bedrock, region: eu-west-1}
    until: 2099-12-01T06:00:00Z
    reason: provider maintenance
"""


@pytest.fixture
def cli(db, tmp_path, monkeypatch):
    path = tmp_path / "firsttoken.yaml"
    path.write_text(CONFIG)
    monkeypatch.setenv("FIRSTTOKEN_DATABASE_URL", db.url.render_as_string(hide_password=False))

    def call(*argv: str) -> int:
        return main(["silence", *argv, "--config", str(path)])

    return call


def listed(cli, capsys, *flags) -> list[dict]:
    capsys.readouterr()
    assert cli("list", "--json", *flags) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_add_list_expire(cli, db, capsys):
    assert cli("add", "--match", "provider=bedrock,region=eu-west-1", "--for", "2h", "--reason", "failover drill") == 0
    out = capsys.readouterr().out
    assert out.startswith("silence 1 added: provider=bedrock,region=eu-west-1 until ")
    items = listed(cli, capsys)
    assert [i["source"] for i in items] == ["config", "database"]
    config_item, db_item = items
    assert config_item["id"] is None and config_item["reason"] == "provider maintenance"
    assert db_item["id"] == 1 and db_item["state"] == "active" and db_item["reason"] == "failover drill"
    assert db_item["match"] == {"provider": "bedrock", "region": "eu-west-1"}
    ends = datetime.fromisoformat(db_item["ends_at"].replace("Z", "+00:00"))
    assert timedelta(hours=1, minutes=59) < ends - datetime.now(UTC) <= timedelta(hours=2)
    # The engine sees it: it mutes a model of that provider-region, and the provider-region itself.
    with db.connect() as conn:
        silences = [s for s in active_silences(conn, (), datetime.now(UTC))]
    assert silences[0].mutes(Scope(provider="bedrock", region="eu-west-1", model="m", prompt="short"))
    assert silences[0].mutes(Scope(provider="bedrock", region="eu-west-1"))
    assert not silences[0].mutes(Scope(provider="bedrock", region="us-east-1", model="m", prompt="short"))

    assert cli("expire", "1") == 0
    assert "silence 1 expired" in capsys.readouterr().out
    assert [i["source"] for i in listed(cli, capsys)] == ["config"]
    assert [i["state"] for i in listed(cli, capsys, "--all")] == ["active", "ended"]
    assert cli("expire", "1") == 0 and "already ended" in capsys.readouterr().out
    assert cli("expire", "99") == 1


def test_until_and_table_output(cli, capsys):
    until = (datetime.now(UTC) + timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert cli("add", "--match", "model=gpt-4o*", "--until", until) == 0
    capsys.readouterr()
    assert cli("list") == 0
    table = capsys.readouterr().out
    assert "model=gpt-4o*" in table and until in table and "config" in table


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["add", "--match", "colour=blue", "--for", "1h"], "unknown label"),
        (["add", "--match", "", "--for", "1h"], "at least one of"),
        (["add", "--match", "provider", "--for", "1h"], "expected label=value"),
        (["add", "--match", "provider=x", "--for", "soon"], "duration"),
        (["add", "--match", "provider=x", "--until", "2001-01-01T00:00:00Z"], "already be over"),
        (["add", "--match", "provider=x", "--until", "tomorrow"], "ISO 8601"),
        (["add", "--match", "provider=x", "--for", "400d"], "at most 366 days"),
        (["add", "--match", "provider=x"], "one of the arguments"),
    ],
)
def test_bad_usage_is_exit_2_with_one_line(cli, capsys, argv, message):
    assert cli(*argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
