import argparse
import csv
import io
import json
from datetime import UTC, datetime, timedelta

import pytest

from monitor.commands import db as db_command
from monitor.commands import samples as samples_command
from monitor.errors import UsageError
from monitor.sample import OUTPUT_FIELDS, SAMPLE_FIELDS, Sample
from monitor.storage import migrate
from monitor.storage.queries import insert_samples

from .factories import full_sample, make_samples


def url_of(engine) -> str:
    return engine.url.render_as_string(hide_password=False)


def samples_args(**kw) -> argparse.Namespace:
    values = dict(config="firsttoken.yaml", target="*", since="1h", json=False, csv=False, limit=None)
    values.update(kw)
    return argparse.Namespace(**values)


@pytest.fixture
def recent(engine, monkeypatch, tmp_path):
    monkeypatch.setenv("FIRSTTOKEN_DATABASE_URL", url_of(engine))
    monkeypatch.chdir(tmp_path)
    now = datetime.now(UTC)
    stored = [full_sample(started_at=now - timedelta(minutes=5))]
    stored += make_samples(4, start=now - timedelta(minutes=3), step_s=30, targets=2)
    old = make_samples(1, start=now - timedelta(hours=5), seed=9)
    insert_samples(engine, stored + old)
    return stored


def test_samples_json_has_probe_fields_plus_agent_and_id(recent, capsys):
    assert samples_command.run(samples_args(json=True)) == 0
    lines = capsys.readouterr().out.splitlines()
    objects = [json.loads(line) for line in lines]
    # Every field, the older name of cache_read_tokens beside it (an alias of the output alone), and
    # whether a maintenance window covers the probe (DESIGN §16; none here).
    assert objects == [
        {**s.to_dict(), "cached_input_tokens": s.cache_read_tokens, "in_maintenance": False} for s in recent
    ]
    assert list(objects[0]) == [*OUTPUT_FIELDS, "in_maintenance"] and {"agent", "id"} <= set(objects[0])
    assert set(OUTPUT_FIELDS) - set(SAMPLE_FIELDS) == {"cached_input_tokens"}
    assert objects[0]["cached_input_tokens"] == objects[0]["cache_read_tokens"] == 3
    assert [Sample.from_dict(o) for o in objects] == recent  # the output reads back as it was stored


def test_samples_csv_and_target_glob(recent, capsys):
    assert samples_command.run(samples_args(csv=True, target="prov1/*")) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["id"] for r in rows] == [s.id for s in recent if s.target.startswith("prov1/")]
    assert rows[0]["ok"] in ("true", "false") and list(rows[0]) == list(OUTPUT_FIELDS)
    assert all(r["cached_input_tokens"] == r["cache_read_tokens"] for r in rows)


def test_samples_table_and_since(recent, capsys):
    assert samples_command.run(samples_args(since="6h")) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("started_at") and len(out) == 1 + 1 + len(recent)  # header, the 5 h old one, recent
    assert "stream_error" in out[2] and "eu-west" in out[2]


def test_samples_usage_errors(recent):
    with pytest.raises(UsageError):
        samples_command.run(samples_args(json=True, csv=True))
    with pytest.raises(UsageError):
        samples_command.run(samples_args(since="soon"))


def test_samples_on_an_unmigrated_database_says_what_to_run(empty_engine, monkeypatch, capsys):
    monkeypatch.setenv("FIRSTTOKEN_DATABASE_URL", url_of(empty_engine))
    assert samples_command.run(samples_args()) == 1
    err = capsys.readouterr().err.strip()
    assert err.endswith("run 'firsttoken db upgrade'") and "\n" not in err


def test_db_upgrade_command(empty_engine, monkeypatch, capsys):
    monkeypatch.setenv("FIRSTTOKEN_DATABASE_URL", url_of(empty_engine))
    args = argparse.Namespace(config="firsttoken.yaml", db_command="upgrade", revision=None)
    assert db_command.run(args) == 0
    assert f"upgraded from none to {migrate.head_revision()}" in capsys.readouterr().out
    assert migrate.check_schema(empty_engine) is None
    assert db_command.run(args) == 0
    assert "already at revision" in capsys.readouterr().out
    current = argparse.Namespace(config="firsttoken.yaml", db_command="current")
    assert db_command.run(current) == 0
    assert "up to date" in capsys.readouterr().out


def test_a_failed_check_is_stored_shown_and_counted_as_a_failure(engine, monkeypatch, tmp_path, capsys):
    from monitor.alerts.feed import Point

    monkeypatch.setenv("FIRSTTOKEN_DATABASE_URL", url_of(engine))
    monkeypatch.chdir(tmp_path)
    now = datetime.now(UTC)
    failed = full_sample(
        started_at=now - timedelta(minutes=1), error_kind="assertion", failed_check="json_schema",
        error_message="json_schema: answer is not JSON: Expecting value at char 0", cost_usd=0.00042,
        answer_fingerprint="0123456789abcdef",
    )  # fmt: skip
    insert_samples(engine, [failed])
    assert samples_command.run(samples_args(json=True)) == 0
    (line,) = capsys.readouterr().out.splitlines()
    shown = json.loads(line)
    assert (shown["ok"], shown["error_kind"], shown["failed_check"]) == (False, "assertion", "json_schema")
    assert shown["ttft_ms"] == failed.ttft_ms and shown["cost_usd"] == 0.00042  # timings and cost kept
    assert samples_command.run(samples_args()) == 0
    assert "assertion:json_schema" in capsys.readouterr().out
    # availability and the error-rate rules see it as a failure; latency rules do not see it
    point = Point(
        failed.target, failed.agent, failed.started_at, failed.id, False, "assertion", 230.5, None, None, None
    )
    assert point.value("error_rate") is None and point.value("ttft_ms") is None
