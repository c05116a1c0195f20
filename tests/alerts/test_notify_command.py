"""`firsttoken notify test [--notifier NAME]` (DESIGN §18): a sample alert through real receivers, what each answered."""

from __future__ import annotations

import json
import socket

import pytest

from monitor.cli import main
from monitor.storage import migrate
from monitor.storage.db import make_engine
from tests.mailserver import MailServer

from .helpers import config_spec
from .receiver import Receiver

HOOK_TOKEN = "NOTIFYhooktoken-88a1c2"
TEAMS_SIG = "NOTIFYteamssig-19f0e7"


def dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def setup(tmp_path, monkeypatch):
    database = f"sqlite:///{tmp_path / 'ft.db'}"
    engine = make_engine(database)
    migrate.upgrade(engine)
    engine.dispose()
    with Receiver() as slack, Receiver(ok_status=202) as teams, MailServer() as mail:
        spec = config_spec(models=("gpt-4o",), providers=("openai",), regions=("us-east",))
        spec["database"] = database
        spec["public_url"] = "https://ft.example:9464"
        spec["smtp"] = {"host": "127.0.0.1", "port": mail.port, "starttls": False, "from": "ft@example.com"}
        spec["notifiers"] = [
            {"name": "oncall-slack", "type": "slack", "url": "${SLACK_URL}"},
            {"name": "oncall-teams", "type": "teams", "url": "${TEAMS_URL}"},
            {"name": "oncall-mail", "type": "email", "to": ["oncall@example.com"]},
        ]
        path = tmp_path / "firsttoken.yaml"
        path.write_text(json.dumps(spec))
        monkeypatch.setenv("SLACK_URL", f"{slack.url}/services/T0/B0/{HOOK_TOKEN}")
        monkeypatch.setenv("TEAMS_URL", f"{teams.url}/invoke?sig={TEAMS_SIG}")
        monkeypatch.delenv("FIRSTTOKEN_DATABASE_URL", raising=False)
        yield path, slack, teams, mail


def test_every_notifier_gets_the_sample_and_says_what_it_answered(setup, capsys):
    path, slack, teams, mail = setup
    assert main(["notify", "test", "--config", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "sample alert #0: ttft-regression on openai/gpt-4o@us-east:short (chart and silence links signed)"
    )
    assert out[1:] == [
        "oncall-slack  slack        ok: HTTP 200",
        "oncall-teams  teams        ok: HTTP 202",
        f"oncall-mail   email        ok: accepted by smtp 127.0.0.1:{mail.port}",
    ]
    blocks = slack.requests[0].json()["blocks"]
    image = next(b for b in blocks if b["type"] == "image")
    assert image["image_url"].startswith("https://ft.example:9464/alerts/0/chart.png?exp=")
    buttons = next(b for b in blocks if b["type"] == "actions")["elements"]
    assert [b["text"]["text"] for b in buttons] == ["Silence 1 h"]  # no dashboard_url nor runbook configured
    card = teams.requests[0].json()["attachments"][0]["content"]
    assert card["version"] == "1.5"
    (got,) = mail.wait_for(1)
    assert got.message["Subject"].startswith("PAGE · ttft-regression firing on")
    assert any(part.get_content_type() == "image/png" for part in got.message.walk())


def test_one_notifier_by_name_and_a_failure_is_exit_1_in_one_line(setup, capsys, monkeypatch):
    path, slack, _teams, _mail = setup
    assert main(["notify", "test", "--notifier", "oncall-teams", "--config", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == ["oncall-teams  teams        ok: HTTP 202"]
    assert slack.requests == []
    monkeypatch.setenv("SLACK_URL", f"http://127.0.0.1:{dead_port()}/services/T0/B0/{HOOK_TOKEN}")
    assert main(["notify", "test", "--notifier", "oncall-slack", "--config", str(path)]) == 1
    captured = capsys.readouterr()
    (line,) = captured.out.splitlines()[1:]
    assert line.startswith("oncall-slack  slack        FAILED: slack http://127.0.0.1:") and "ConnectError" in line
    assert HOOK_TOKEN not in captured.out + captured.err


def test_an_unknown_notifier_is_exit_2(setup, capsys):
    path, *_ = setup
    assert main(["notify", "test", "--notifier", "oncall-slak", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "no notifier 'oncall-slak' (did you mean 'oncall-slack'?)" in err
    assert "oncall-slack, oncall-teams, oncall-mail" in err


def test_only_the_chosen_notifiers_credentials_are_needed(setup, capsys, monkeypatch):
    """Least privilege: a provider's key and the other notifiers' secrets may stay unset; the chosen
    notifier's unset secret is one line, exit 2."""
    path, slack, _teams, _mail = setup
    data = json.loads(path.read_text())
    data["providers"]["openai"]["api_key"] = "${OPENAI_API_KEY}"
    path.write_text(json.dumps(data))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("TEAMS_URL")
    assert main(["notify", "test", "--notifier", "oncall-slack", "--config", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "oncall-slack  slack        ok: HTTP 200"
    assert len(slack.requests) == 1
    assert main(["notify", "test", "--notifier", "oncall-teams", "--config", str(path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"{path}: notifiers[1].url: environment variable TEAMS_URL is not set (notify test sends it)"]
