"""`firsttoken maintenance add|list|end|export` through the real CLI entry point, the store under it,
and `firsttoken samples --json` marking the probes taken inside a window. SQLite and PostgreSQL."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from monitor.cli import main
from monitor.maintenance.store import (
    ProviderMaintenance,
    ProviderWindowError,
    active_windows,
    add_window,
    end_window,
    load_db_windows,
    store_provider_windows,
    windows_between,
)
from monitor.storage.queries import insert_samples
from tests.alerts.helpers import sample

CONFIG = """
providers:
  openai:
    protocol: openai-chat
    regions: {us: "https://api.openai.com/v1"}
    models: [gpt-4o-mini]
prompts:
  short: {messages: [{role: user, content: hi}], max_tokens: 8}
checks:
  - providers: [openai]
    prompts: [short]
maintenance:
  - name: openai-sunday
    match: {provider: openai}
    rrule: "FREQ=WEEKLY;BYDAY=SU;BYHOUR=2;BYMINUTE=0"
    duration: 1h
    timezone: Europe/Berlin
    note: OpenAI's weekly maintenance
"""


@pytest.fixture
def cli(db, tmp_path, monkeypatch):
    path = tmp_path / "firsttoken.yaml"
    path.write_text(CONFIG)
    monkeypatch.setenv("FIRSTTOKEN_DATABASE_URL", db.url.render_as_string(hide_password=False))

    def call(*argv: str) -> int:
        return main([*argv[:1], *argv[1:], "--config", str(path)])

    return call


def listed(cli, capsys, *flags) -> list[dict]:
    capsys.readouterr()
    assert cli("maintenance", "list", "--json", *flags) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_add_list_end(cli, db, capsys):
    assert cli("maintenance", "add", "--match", "provider=openai,region=us", "--for", "30m", "--note", "keys") == 0
    assert capsys.readouterr().out.startswith("maintenance 1 added: provider=openai,region=us now until ")
    later = (datetime.now(UTC) + timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    argv = ["--match", "model=gpt-4o*", "--starts", later, "--for", "1h", "--note", "upgrade", "--name", "gpt"]
    assert cli("maintenance", "add", *argv) == 0
    items = listed(cli, capsys)
    stored = [i for i in items if i["source"] == "database"]
    assert [(i["id"], i["state"], i["note"]) for i in stored] == [(1, "active", "keys"), (2, "upcoming", "upgrade")]
    assert stored[1]["name"] == "gpt" and stored[1]["starts_at"] == later and stored[0]["mutes"]
    config_items = [i for i in items if i["source"] == "config"]
    assert config_items and all(i["name"] == "openai-sunday" and i["id"] is None for i in config_items)
    with db.connect() as conn:
        (active,) = active_windows(conn, (), datetime.now(UTC))
    assert (active.id, dict(active.match), active.note) == (1, {"provider": "openai", "region": "us"}, "keys")

    assert cli("maintenance", "end", "1") == 0 and "maintenance 1 ended" in capsys.readouterr().out
    assert cli("maintenance", "end", "2") == 0 and "cancelled" in capsys.readouterr().out
    assert cli("maintenance", "end", "1") == 0 and "had already ended" in capsys.readouterr().out
    assert [i for i in listed(cli, capsys) if i["source"] == "database"] == []
    assert [i["state"] for i in listed(cli, capsys, "--all") if i["source"] == "database"] == ["ended", "ended"]
    assert cli("maintenance", "end", "99") == 1
    err = capsys.readouterr().err
    assert "no window 99" in err and err.count("\n") == 1


def test_table_output(cli, capsys):
    assert cli("maintenance", "add", "--match", "provider=openai", "--for", "1h", "--note", "failover drill") == 0
    capsys.readouterr()
    assert cli("maintenance", "list", "--days", "8") == 0
    table = capsys.readouterr().out
    assert "failover drill" in table and "database" in table and "OpenAI's weekly maintenance" in table


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--match", "colour=blue", "--for", "1h", "--note", "x"], "unknown label"),
        (["--match", "", "--for", "1h", "--note", "x"], "at least one of"),
        (["--match", "provider", "--for", "1h", "--note", "x"], "expected label=value"),
        (["--match", "provider=x", "--for", "soon", "--note", "x"], "duration"),
        (["--match", "provider=x", "--until", "2001-01-01T00:00:00Z", "--note", "x"], "already be over"),
        (["--match", "provider=x", "--until", "tomorrow", "--note", "x"], "ISO 8601"),
        (["--match", "provider=x", "--for", "40d", "--note", "x"], "at most 31 days"),
        (["--match", "provider=x", "--for", "1h", "--note", " "], "--note"),
        (["--match", "provider=x", "--note", "x"], "one of the arguments"),
        (["--match", "provider=x", "--for", "1h"], "--note"),
    ],
)
def test_bad_usage_is_exit_2_with_one_line(cli, capsys, argv, message):
    assert cli("maintenance", "add", *argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_store_add_list_end_and_provider_windows(db):
    t0 = datetime(2026, 6, 1, 12, tzinfo=UTC)
    hour = timedelta(hours=1)
    with db.begin() as conn:
        first = add_window(conn, {"provider": "y"}, starts_at=t0, ends_at=t0 + hour, note="n", now=t0)
        second = add_window(conn, {"region": "eu"}, starts_at=t0 + 3 * hour, ends_at=t0 + 4 * hour, now=t0)
        with pytest.raises(ValueError, match="end before it starts"):
            add_window(conn, {"provider": "y"}, starts_at=t0, ends_at=t0, now=t0)
        with pytest.raises(ValueError, match="unknown label"):
            add_window(conn, {"agent": "a1"}, starts_at=t0, ends_at=t0 + hour, now=t0)
        plan = [ProviderMaintenance("abc", "DB upgrade", t0 + 2 * hour, t0 + 3 * hour, "https://stspg.io/abc")]
        assert store_provider_windows(conn, "openai", plan, t0) == 1
    with db.connect() as conn:
        assert [w.id for w in load_db_windows(conn)] == [first, 3, second]
        assert [w.id for w in windows_between(conn, (), t0 + hour, t0 + 3 * hour)] == [3]  # [start, end)
        assert [w.id for w in active_windows(conn, (), t0)] == [first]  # a window starting now is in effect
        (provider,) = windows_between(conn, (), t0 + 2 * hour, t0 + 3 * hour)
    assert (provider.source, provider.ours, dict(provider.match), provider.note) == (
        "provider",
        False,
        {"provider": "openai"},
        "https://stspg.io/abc",
    )
    with db.begin() as conn:
        # Re-polled: moved an hour later (updated in place); then no longer listed: cancelled (deleted).
        moved = [ProviderMaintenance("abc", "DB upgrade", t0 + 3 * hour, t0 + 4 * hour)]
        store_provider_windows(conn, "openai", moved, t0)
        assert [(w.id, w.starts_at) for w in load_db_windows(conn) if w.source == "provider"] == [(3, t0 + 3 * hour)]
        store_provider_windows(conn, "openai", [], t0)
        assert [w.source for w in load_db_windows(conn)] == ["database", "database"]
        store_provider_windows(conn, "openai", plan, t0)
        (theirs,) = [w.id for w in load_db_windows(conn) if w.source == "provider"]
        with pytest.raises(ProviderWindowError):  # the provider's plan is not ours to end
            end_window(conn, theirs, t0)
        assert end_window(conn, first, t0 + hour / 2) == "ended"
        assert end_window(conn, 999, t0) is None


def test_samples_json_marks_probes_inside_a_window(cli, db, capsys):
    now = datetime.now(UTC)
    target = "openai/gpt-4o-mini@us:short"
    other = "anthropic/claude@us:short"
    probes = [sample(target, now - timedelta(minutes=m), 300.0) for m in (50, 30, 10)]
    insert_samples(db, [*probes, sample(other, now - timedelta(minutes=30), 300.0)])
    with db.begin() as conn:
        add_window(
            conn,
            {"provider": "openai"},
            starts_at=now - timedelta(minutes=40),
            ends_at=now - timedelta(minutes=20),
            now=now,
        )
    capsys.readouterr()
    assert cli("samples", "--json", "--since", "1h") == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    marks = {(r["target"], r["started_at"][:16]): r["in_maintenance"] for r in rows}
    assert sorted(marks.values()) == [False, False, False, True]
    assert [r["in_maintenance"] for r in rows if r["target"] == target] == [False, True, False]
