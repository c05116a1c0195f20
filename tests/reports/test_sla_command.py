"""`firsttoken report sla`'s usage: a bad period, a PDF without a file, an unknown provider are one line, exit 2."""

from __future__ import annotations

import json

import pytest

from tests.commandline import firsttoken_cli
from tests.reports.test_sla_month import CONFIG


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    path = tmp_path_factory.mktemp("sla-cli")
    (path / "firsttoken.yaml").write_text(CONFIG.replace("providers:\n", "providers:\n  plain:\n"
        "    protocol: openai-chat\n    regions: {r1: \"http://127.0.0.1:9/v1\"}\n    models: [m]\n", 1))  # fmt: skip
    assert cli(path, "db", "upgrade").returncode == 0
    return path


def cli(cwd, *args):
    return firsttoken_cli(cwd, f"sqlite:///{cwd / 'cli.db'}", *args)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give --month YYYY-MM, or --from DATE and --to DATE"),
        (("--month", "2026-13"), "--month: expected YYYY-MM, got '2026-13'"),
        (("--month", "2026-11", "--from", "2026-11-01"), "give --month or --from/--to, not both"),
        (("--from", "2026-11-05", "--to", "2026-11-01"), "--to (2026-11-01) must be after --from (2026-11-05)"),
        (("--from", "yesterday", "--to", "2026-11-01"), "--from: expected a date (2026-11-01) or an ISO time"),
        (("--month", "2026-11", "--format", "pdf"), "--format pdf needs -o FILE"),
        (("--month", "2026-11", "--provider", "nope"), "--provider nope: no such provider in firsttoken.yaml"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(workdir, args, message):
    done = cli(workdir, "report", "sla", *args)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr


def test_an_empty_month_reports_no_data_and_a_provider_without_contract_says_so(workdir):
    done = cli(workdir, "report", "sla", "--month", "2026-10", "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["period"]["minutes"] == 31 * 24 * 60  # October: 31 days (no DST in UTC)
    (contract,) = report["contracts"]
    assert contract["uptime"]["value"] is None and contract["uptime"]["minutes_counted"] == 0
    assert contract["uptime"]["minutes_left_out"] == {"no data": 31 * 24 * 60}
    assert contract["credit"] is None and report["providers_without_contract"] == ["plain"]
    alone = cli(workdir, "report", "sla", "--month", "2026-10", "--provider", "plain", "--format", "json")
    assert alone.returncode == 0 and json.loads(alone.stdout)["contracts"] == []
    assert "no provider asked for has a contract" in alone.stderr
