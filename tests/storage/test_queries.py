import dataclasses
import math
from datetime import UTC, timedelta, timezone

import pytest
from sqlalchemy import func, select, text

from monitor.sample import SAMPLE_FIELDS, ErrorKind
from monitor.storage.models import Agent, SampleRow, Target
from monitor.storage.queries import insert_samples, recent_samples

from .factories import BASE_TIME, full_sample, make_samples


def count(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(SampleRow)).scalar()


def test_every_sample_field_round_trips(engine):
    original = full_sample()
    minimal = full_sample(
        id="b" * 32,
        ok=True,
        error_kind=None,
        error_message=None,
        server_timing=None,
        connection_reused=None,
        output_tokens=None,
        started_at=BASE_TIME + timedelta(seconds=1),
    )
    insert_samples(engine, [original, minimal])
    got = recent_samples(engine, since=BASE_TIME - timedelta(hours=1))
    assert got == [original, minimal]
    for field in SAMPLE_FIELDS:
        assert getattr(got[0], field) == getattr(original, field), field
    assert got[0].started_at.tzinfo is not None and got[0].started_at.utcoffset() == timedelta(0)


def test_timestamps_in_other_zones_are_stored_as_utc(engine):
    local = BASE_TIME.astimezone(timezone(timedelta(hours=-7)))
    insert_samples(engine, [full_sample(started_at=local)])
    (got,) = recent_samples(engine, since=BASE_TIME - timedelta(minutes=1))
    assert got.started_at == BASE_TIME and got.started_at.tzinfo == UTC


def test_idempotent_reinsert_stores_once(engine):
    samples = make_samples(50)
    insert_samples(engine, samples)
    insert_samples(engine, samples + samples[:10])
    assert count(engine) == 50


def test_unstorable_values_are_cleaned_not_fatal(engine):
    dirty = full_sample(
        error_message="nul\x00inside",
        ttft_ms=math.nan,
        tps=math.inf,
        error_kind=ErrorKind.PROTOCOL,
        server_timing={"x": math.nan, "s": "a\x00b"},
    )
    insert_samples(engine, [dirty])
    (got,) = recent_samples(engine, since=BASE_TIME - timedelta(minutes=1))
    assert got.error_message == "nul\ufffdinside"
    assert got.ttft_ms is None and got.tps is None
    assert got.error_kind == "protocol" and type(got.error_kind) is str
    assert got.server_timing == {"x": None, "s": "a\ufffdb"}


def test_targets_and_agents_are_kept_up_to_date(engine):
    samples = make_samples(30, targets=3, agent="a1") + make_samples(
        5, start=BASE_TIME + timedelta(hours=1), targets=1, agent="a2", seed=2
    )
    insert_samples(engine, samples)
    insert_samples(engine, make_samples(3, start=BASE_TIME - timedelta(days=1), targets=1))  # older: last_seen stays
    with engine.connect() as conn:
        targets = {r.id: r for r in conn.execute(select(Target.__table__))}
        agents = {r.name: r.last_sample_at for r in conn.execute(select(Agent.__table__))}
    assert set(targets) == {s.target for s in samples}
    t0 = targets["prov0/model-0@region:short"]
    assert (t0.provider, t0.model, t0.region, t0.prompt) == ("prov0", "model-0", "region", "short")
    assert t0.last_seen == max(s.started_at for s in samples if s.target == t0.id)
    assert agents["a2"] == samples[-1].started_at
    assert agents["a1"] == max(s.started_at for s in samples if s.agent == "a1")


@pytest.mark.parametrize(
    ("glob", "expected"),
    [
        ("*", {"prov0", "prov1", "prov2", "pro_x"}),
        ("prov0/*", {"prov0"}),
        ("prov?/*", {"prov0", "prov1", "prov2"}),
        ("prov[01]/*", {"prov0", "prov1"}),
        ("pro_x/*", {"pro_x"}),  # `_` is literal, not LIKE's any-character
        ("PROV0/*", set()),  # case-sensitive like fnmatchcase
    ],
)
def test_recent_samples_glob(engine, glob, expected):
    samples = make_samples(12, targets=3)
    odd = dataclasses.replace(samples[0], id="c" * 32, target="pro_x/m@r:p", provider="pro_x")
    insert_samples(engine, [*samples, odd])
    got = recent_samples(engine, target_glob=glob, since=BASE_TIME - timedelta(hours=1))
    assert {s.provider for s in got} == expected


def test_recent_samples_since_until_limit_and_order(engine):
    samples = make_samples(100, step_s=60)
    insert_samples(engine, list(reversed(samples)))
    since = samples[10].started_at
    got = recent_samples(engine, since=since, until=samples[50].started_at)
    assert got == samples[10:50]
    assert recent_samples(engine, since=since, limit=5) == samples[-5:]
    assert (
        recent_samples(engine, target_glob="prov[0]/*", since=since, limit=2)
        == [s for s in samples if s.target.startswith("prov0")][-2:]
    )


def test_partitions_are_created_on_demand_for_any_day_on_postgres(engine):
    if engine.dialect.name != "postgresql":
        return
    days = [BASE_TIME - timedelta(days=400), BASE_TIME, BASE_TIME + timedelta(days=3)]
    insert_samples(engine, [full_sample(id=f"{i:032x}", started_at=d) for i, d in enumerate(days)])
    with engine.connect() as conn:
        names = set(conn.execute(text("SELECT relname FROM pg_class WHERE relname LIKE 'samples_p%'")).scalars())
    assert {f"samples_p{d:%Y%m%d}" for d in days} <= names
    assert count(engine) == 3


def test_clean_json_keeps_clean_timings_as_they_are_and_cleans_the_rest():
    from monitor.storage.rows import clean_json

    timing = {"load_ms": 12, "eval_ms": 3.5}
    assert clean_json(timing) is timing  # the common case is not rebuilt
    assert clean_json({"k\x00": 1.0, "n": {"x": math.inf}, "l": [math.nan, "a\x00"], "b": True}) == {
        "k\ufffd": 1.0,
        "n": {"x": None},
        "l": [None, "a\ufffd"],
        "b": True,
    }
    assert clean_json({"x": -math.inf}) == {"x": None}
