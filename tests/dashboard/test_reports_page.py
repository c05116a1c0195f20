"""The Reports page (DESIGN §17) on the seeded SQLite and PostgreSQL databases, with a config that has
a `reports:` entry and a provider contract: the weekly report's preview shows the probes the seed
stored in the week, both reports offer their downloads."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from monitor import fmt
from monitor.reports.schedule import week_at
from tests.dashboard.figures import problems

CONFIG = """
providers:
  anthropic: {protocol: anthropic, regions: {eu-west-1: "https://api.anthropic.com"}, models: [claude-3-5-haiku]}
  openai:
    protocol: openai-chat
    regions: {eu-west-1: "https://api.openai.com/v1"}
    models: [gpt-4o-mini]
    contract:
      uptime: {minute_down: {error_rate: 5%}, credits: [{below: 99.9%, credit: 10%}]}
prompts:
  short: {messages: [{role: user, content: hi}], max_tokens: 8}
  long: {messages: [{role: user, content: hello there}], max_tokens: 8}
checks: [{providers: [anthropic, openai], prompts: [short, long]}]
smtp: {host: 127.0.0.1, port: 2525, starttls: false, from: reports@example.com}
reports:
  - {name: pm-weekly, to: [pm@example.com], every: "MON 09:00", timezone: Europe/Berlin}
"""


@pytest.fixture
def page(app, seeded, tmp_path, monkeypatch):
    url, data = seeded
    path = tmp_path / "firsttoken.yaml"
    path.write_text(CONFIG)
    at = app(url)
    monkeypatch.setenv("FIRSTTOKEN_CONFIG", str(path))
    at.run()
    at.switch_page("pages/reports.py").run()
    return at, data


def _frames(at) -> list[str]:
    return [el.proto.srcdoc for el in at.get("iframe")]


def test_the_weekly_report_of_this_week_shows_the_probes_stored_in_it(page):
    at, data = page
    assert not problems(at), problems(at)
    report, week = at.selectbox(key="reports-entry"), at.selectbox(key="reports-week")
    assert report.value == "pm-weekly" and week.index == 1  # the last whole week in Europe/Berlin
    this_week = week_at(datetime.now(UTC), ZoneInfo("Europe/Berlin"))
    week.set_value(this_week.label).run()
    assert not problems(at), problems(at)
    assert at.query_params["week"] == this_week.label  # the view is in the URL, as on every page
    weekly = _frames(at)[0]
    assert f"{this_week.label}" in weekly and weekly.count("data:image/png;base64,") == 2
    for provider in ("anthropic", "openai"):
        stored = [
            s for s in data.samples
            if s.provider == provider and this_week.start <= s.started_at < this_week.end and s.error_kind != "cancelled"
        ]  # fmt: skip
        assert f">{fmt.count(len(stored))}<" in weekly, provider  # the Probes row of its table
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels[:2] == ["HTML", "PDF"]


def test_the_sla_report_is_previewed_with_its_four_downloads(page):
    at, _data = page
    assert len(_frames(at)) == 2
    sla = _frames(at)[1]
    assert "openai" in sla
    assert [b.proto.label for b in at.get("download_button")][2:] == ["HTML", "PDF", "JSON", "CSV"]
