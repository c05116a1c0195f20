"""Prompt caching on the dashboard (DESIGN §13): the Target and Compare pages show a cache
target's cold and warm TTFT, saving, hit ratio and cost saved, from a real SQLite database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import yaml

from dashboard.cache_view import cache_rows
from monitor.config.schema import Price
from monitor.storage import migrate
from monitor.storage.db import make_engine
from monitor.storage.queries import insert_samples
from monitor.storage.queries.cache_figures import CacheFigures
from monitor.storage.rollups import rollup_hours
from tests.dashboard.figures import problems
from tests.storage.test_cache_figures import pair_samples

TARGET = "fast/m@r:doc"


@pytest.fixture
def cache_db(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    start = datetime.now(UTC) - timedelta(hours=6, minutes=5)
    shift = start - pair_samples("fast", 900.0, 150.0, 10, 1)[0].started_at
    samples = [s.__class__(**{**s.to_dict(), "started_at": s.started_at + shift}) for s in
               pair_samples("fast", 900.0, 150.0, hit_every=10, seed=1)]  # fmt: skip
    insert_samples(engine, samples)
    rollup_hours(engine, start - timedelta(hours=1), datetime.now(UTC) + timedelta(hours=1))  # Compare reads them
    engine.dispose()
    config = tmp_path / "firsttoken.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "providers": {
                    "fast": {"protocol": "openai-chat", "regions": {"r": "http://127.0.0.1:9/v1"}, "models": ["m"]}
                },
                "prompts": {"doc": {"synthetic": {"tokens": 1200}, "cache": True}},
                "checks": [{"providers": ["fast"], "prompts": ["doc"]}],
                "prices": {"fast/m": {"input": 3.0, "output": 15.0, "cached_input": 0.3}},
            }
        )
    )
    return url, config


def test_target_and_compare_pages_show_the_prompt_cache(app, cache_db, monkeypatch):
    url, config = cache_db
    at = app(url)
    monkeypatch.setenv("FIRSTTOKEN_CONFIG", str(config))
    at.run()
    at.switch_page("pages/target.py").run()
    at.selectbox(key="target-id").set_value(TARGET).run()
    assert not problems(at), problems(at)
    assert "Prompt cache" in [h.value for h in at.subheader]
    (table,) = [t.value for t in at.dataframe if "hit ratio" in t.value.columns]
    row = table.iloc[0]
    assert row["target"] == TARGET and row["hit ratio"] == "90%"
    assert row["cost saved"].startswith("$") and row["saving"] != "—"
    at.switch_page("pages/compare.py").run()
    assert not problems(at), problems(at)
    assert "Prompt cache" in [h.value for h in at.subheader], [i.value for i in at.info] + [
        m.value for m in at.markdown
    ]


def test_cache_rows_order_and_cost():
    fast = CacheFigures("a/m@r:p", 900.0, 150.0, 10, 10, 9, 10, 9_000, 1_000)
    slow = CacheFigures("b/m@r:p", 700.0, 500.0, 10, 10, 10, 10, 10_000, 0)
    rows = cache_rows({f.target: f for f in (slow, fast)}, {"a/m": Price(input=3.0, output=15.0, cached_input=0.3)})
    assert [r["target"] for r in rows] == ["a/m@r:p", "b/m@r:p"]  # the biggest saving first
    assert rows[0]["cost saved"] == f"${9_000 * 2.7 / 1e6:.4f}" and rows[1]["cost saved"] == "—"


def test_an_sql_joined_bucket_with_empty_histograms_decodes():
    """string_agg / group_concat join every row's text, "{}" too (a metric never measured)."""
    from monitor.storage.queries.histmatrix import decode

    rows, buckets, counts = decode(['{},{"3":2}', "{}", '{"5":1},{}'])
    assert rows.tolist() == [0, 2] and buckets.tolist() == [3, 5] and counts.tolist() == [2, 1]
