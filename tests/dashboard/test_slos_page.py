"""The SLOs page and Provider health's monthly SLO attainment (DESIGN §12), on the seeded SQLite and
PostgreSQL databases, with a config whose SLOs match the seeded targets: figures drawn, and the
attainment shown equals a direct count over the seeded samples."""

from __future__ import annotations

import itertools
import math

import pytest

from tests.dashboard.figures import figures, problems, values

CONFIG = """
providers:
  anthropic: {protocol: anthropic, regions: {eu-west-1: "https://api.anthropic.com"}, models: [claude-3-5-haiku]}
  openai: {protocol: openai-chat, regions: {eu-west-1: "https://api.openai.com/v1"}, models: [gpt-4o-mini]}
prompts:
  short: {messages: [{role: user, content: hi}], max_tokens: 8}
  long: {messages: [{role: user, content: hello there}], max_tokens: 8}
checks: [{providers: [anthropic, openai], prompts: [short, long]}]
slos:
  - {name: answers, objective: 99%, per: provider}
  - {name: fast-short, objective: 95%, match: {prompt: short}, good: {ttft_ms: {below: 2048}}}
"""


@pytest.fixture
def with_slos(app, seeded, tmp_path, monkeypatch):
    url, data = seeded
    path = tmp_path / "firsttoken.yaml"
    path.write_text(CONFIG)

    def build():
        at = app(url)
        monkeypatch.setenv("FIRSTTOKEN_CONFIG", str(path))
        return at

    return build, data


def expected_attainment(data, provider: str) -> str:
    mine = [s for s in data.samples if s.provider == provider and s.error_kind != "cancelled"]
    return f"{sum(s.ok for s in mine) / len(mine) * 100:.3f}%"


def test_slos_page_draws_burn_down_and_burn_rates_with_exact_attainment(with_slos):
    build, data = with_slos
    at = build().run()
    at.switch_page("pages/slos.py").run()
    assert not problems(at), problems(at)
    assert len(figures(at)) == 2
    (table,) = [t.value for t in at.dataframe]
    rows = {r["scope"]: r for r in table.to_dict("records")}
    assert set(rows) == {"anthropic/*", "openai/*"}
    for provider in ("anthropic", "openai"):
        assert rows[f"{provider}/*"]["attainment"] == expected_attainment(data, provider)
    burn = figures(at)[1]
    assert [t["type"] for t in burn["data"]] == ["bar", "scatter"]
    # The seeded days are a few of the 30-day period: every day against the whole period's budget,
    # so the burn-down starts at or below 100%, only falls, and ends at the worst scope's budget left.
    down = [v for v in values(figures(at)[0]["data"][0]["y"]) if v is not None and not math.isnan(v)]
    assert down and down[0] <= 100 and all(b <= a + 1e-9 for a, b in itertools.pairwise(down))
    worst = min(rows.values(), key=lambda r: float(r["budget left"].rstrip("%")))
    assert f"{down[-1]:.1f}%" == worst["budget left"]


def test_health_page_shows_each_slos_attainment_per_calendar_month(with_slos):
    build, _data = with_slos
    at = build().run()
    at.switch_page("pages/health.py").run()
    assert not problems(at), problems(at)
    tables = [t.value for t in at.dataframe]
    months = next(t for t in tables if "SLO" in t.columns)
    assert set(months["SLO"]) == {"answers", "fast-short"}
    month_columns = [c for c in months.columns if c[:2] == "20"]
    assert len(month_columns) == 3


def test_without_slos_the_page_says_so(app, seeded):
    url, _ = seeded
    at = app(url).run()
    at.switch_page("pages/slos.py").run()
    assert not problems(at)
    assert any("No `slos:`" in i.value for i in at.info)
