"""`firsttoken incident list|show|publish|update|resolve` through the real CLI entry point: exit codes
0 done, 1 no such incident (or already resolved), 2 bad usage."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from monitor.alerts.records import Change
from monitor.alerts.scope import Scope
from monitor.cli import main
from tests.alerts.conftest import make_config
from tests.alerts.helpers import config_spec
from tests.incidents.rounds import write_round
from tests.incidents.test_drafting import firing


@pytest.fixture
def cli(db, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FIRSTTOKEN_DATABASE_URL", db.url.render_as_string(hide_password=False))
    config = tmp_path / "none.yaml"  # the database comes from the environment

    def call(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(["incident", *argv, "--config", str(config)])
        out = capsys.readouterr()
        return code, out.out, out.err

    return call


def held_incident(db, tmp_path) -> int:
    """A drafted incident, held (`status_site.publish: manual`)."""
    config = make_config(config_spec(models=("m0",)) | {"status_site": {"publish": "manual"}}, tmp_path)
    now = datetime.now(UTC)
    page = firing(
        Scope("p", "r1", "m0", "short"), rule="slow", fired_at=now - timedelta(minutes=5), last_notified_at=now
    )
    write_round(db, [Change(page)], config, now)
    return 1


def test_list_show_publish_update_resolve(cli, db, tmp_path):
    assert cli("list") == (0, "no incidents\n", "")
    incident = held_incident(db, tmp_path)
    code, out, _ = cli("list")
    assert code == 0 and "draft" in out and "investigating" in out and "p m0: slow responses" in out
    code, out, _ = cli("show", str(incident))
    assert code == 0 and "[draft]" in out and f"firsttoken incident publish {incident}" in out
    assert cli("publish", str(incident))[:2] == (0, f"incident {incident} published (1 update made public)\n")
    code, out, _ = cli("update", str(incident), "--message", "A fix is rolling out.", "--state", "monitoring")
    assert code == 0 and out.startswith(f"incident {incident}: update ")
    assert cli("resolve", str(incident), "--message", "All good.")[:2] == (0, f"incident {incident} resolved\n")
    code, out, _ = cli("show", str(incident), "--json")
    shown = json.loads(out)
    assert code == 0 and shown["status"] == "published" and shown["state"] == "resolved"
    assert [(u["kind"], u["state"], u["published"]) for u in shown["updates"]] == [
        ("detected", "investigating", True), ("update", "monitoring", True), ("resolved", "resolved", True),
    ]  # fmt: skip
    assert shown["alerts"][0]["scope"] == "p/m0@r1:short"
    code, out, _ = cli("list", "--json")
    assert code == 0 and [json.loads(line)["id"] for line in out.splitlines()] == [incident]
    assert cli("list", "--open") == (0, "no incidents\n", "")


def test_exit_codes(cli, db, tmp_path):
    assert cli("show", "7")[0] == 1 and "no incident 7" in cli("show", "7")[2]
    assert cli("publish", "7")[0] == 1 and cli("update", "7", "--message", "x")[0] == 1 and cli("resolve", "7")[0] == 1
    incident = held_incident(db, tmp_path)
    assert cli("resolve", str(incident))[0] == 0
    code, _, err = cli("resolve", str(incident))
    assert code == 1 and "already resolved" in err
    assert cli("update", str(incident))[0] == 2, "--message is required"
    assert cli("update", str(incident), "--message", "   ")[0] == 2
    assert cli("update", str(incident), "--message", "x", "--state", "fine")[0] == 2
    assert cli()[0] == 2 and cli("list", "--limit", "0")[0] == 2
