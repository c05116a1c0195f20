"""SLO status from the rollups (DESIGN §12), on SQLite and PostgreSQL: probes, good probes and the
burn-rate windows equal direct counts over the raw samples when the bound is a histogram bucket
boundary, and stay within the one bucket the bound cuts otherwise; whole days come from the daily
tier with the same answer as the hourly one."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from monitor.config import load_config_text
from monitor.sample import Sample
from monitor.storage.queries import insert_samples
from monitor.storage.queries.slo import Bound, scope_counts
from monitor.storage.queries.slo_report import slo_report
from monitor.storage.rollups import hour_floor, rollup_hours

DAY0 = datetime(2026, 3, 2, tzinfo=UTC)
NOW = DAY0 + timedelta(days=3)
TARGETS = [("p1", "m1"), ("p1", "m2"), ("p2", "m1")]
CONFIG = """
providers:
  p1: {protocol: openai-chat, regions: {r: "http://127.0.0.1:9/v1"}, models: [m1, m2]}
  p2: {protocol: openai-chat, regions: {r: "http://127.0.0.1:9/v1"}, models: [m1]}
prompts:
  short: {messages: [{role: user, content: hi}], max_tokens: 8}
checks: [{providers: [p1, p2], prompts: [short]}]
slos:
  - {name: on-edge, objective: 99%, period: 3d, good: {ttft_ms: {below: 1536}}}
  - {name: per-provider, objective: 99%, period: 3d, per: provider, good: {ttft_ms: {below: 1500ms}}}
  - {name: answers-only, objective: 99%, period: 3d, per: all, good: {checks: false}}
"""


def samples() -> list[Sample]:
    rng = random.Random(5)
    out = []
    for minute in range(3 * 1440):
        for i, (provider, model) in enumerate(TARGETS):
            at = DAY0 + timedelta(minutes=minute, seconds=7 * i)
            ok = rng.random() > 0.03
            kind = None if ok else rng.choice(["timeout", "server_error", "assertion", "cancelled"])
            ttft = rng.uniform(300, 1400) if rng.random() > 0.05 else rng.uniform(1400, 3000)
            out.append(
                Sample(
                    target=f"{provider}/{model}@r:short",
                    provider=provider,
                    model=model,
                    region="r",
                    prompt="short",
                    started_at=at,
                    ok=ok,
                    error_kind=kind,
                    ttft_ms=ttft if ok or kind == "assertion" else None,
                    total_ms=ttft + 700 if ok else None,
                    tps=rng.uniform(20, 120) if ok else None,
                    agent=rng.choice(["a", "b"]),
                )
            )
    return out


@pytest.fixture
def seeded(engine):
    data = samples()
    insert_samples(engine, data)
    rollup_hours(engine, DAY0, NOW, now=NOW + timedelta(hours=1))
    return data


def direct(data, since, bound_ms=None, checks=True, key=lambda s: "*"):
    """(probes, good) per scope key by brute force over the raw samples."""
    out: dict[str, list[int]] = {}
    for s in data:
        if s.started_at < since or s.started_at >= NOW or s.error_kind == "cancelled":
            continue
        ok = s.ok or (not checks and s.error_kind == "assertion")
        good = ok and (bound_ms is None or (s.ttft_ms is not None and s.ttft_ms < bound_ms) or not s.ok)
        row = out.setdefault(key(s), [0, 0])
        row[0] += 1
        row[1] += good
    return out


def test_counts_on_a_bucket_boundary_equal_direct_counts(engine, seeded):
    config = load_config_text(CONFIG)
    report = slo_report(engine, config.slos[0], config.targets, NOW)
    expected = direct(seeded, DAY0, 1536.0, key=lambda s: s.target)
    assert {s.scope_key: [s.budget.probes, s.budget.good] for s in report.scopes} == expected
    for status in report.scopes:
        mine = [s for s in seeded if s.target == status.scope_key]
        for length_s in (3 * 86400 / 720, 3 * 86400 / 30):  # the 6-minute and 2.4-hour long windows
            since = hour_floor(NOW - timedelta(seconds=length_s))
            probes, good = direct(mine, since, 1536.0)["*"]
            rate = ((probes - good) / probes) / 0.01
            name = {360.0: "6m", 8640.0: "2h24m"}[length_s]
            assert status.burn_rates[name] == pytest.approx(rate, rel=1e-9)
        b = status.budget
        assert b.remaining == pytest.approx(1 - (b.probes - b.good) / (0.01 * b.probes))


def test_a_bound_inside_a_bucket_is_off_by_at_most_that_bucket(engine, seeded):
    config = load_config_text(CONFIG)
    report = slo_report(engine, config.slos[1], config.targets, NOW)
    expected = direct(seeded, DAY0, 1500.0, key=lambda s: f"{s.provider}/*")
    # The bucket [1472, 1504) ms holds the bound; its probes are the only ones that may be misjudged.
    straddling = direct([s for s in seeded if s.ok and 1472 <= s.ttft_ms < 1504], DAY0, key=lambda s: f"{s.provider}/*")
    for status in report.scopes:
        probes, good = expected[status.scope_key]
        assert status.budget.probes == probes
        assert abs(status.budget.good - good) <= straddling[status.scope_key][0]


def test_answer_check_failures_are_good_without_checks(engine, seeded):
    config = load_config_text(CONFIG)
    (status,) = slo_report(engine, config.slos[2], config.targets, NOW).scopes
    assert [status.budget.probes, status.budget.good] == direct(seeded, DAY0, checks=False)["*"]
    assert status.scope == {"provider": None, "model": None, "region": None, "prompt": None, "per": "all"}


@pytest.mark.parametrize(
    "bounds",
    [[Bound("ttft_ms", below=1536.0)], [Bound("total_ms", below=2048.0), Bound("tps", above=64.0)]],
    ids=["ttft", "total-and-tps"],
)
def test_daily_tier_gives_the_hourly_answer(engine, seeded, bounds):
    """Whole days from the daily tier (packed ttft and tps, JSON total_ms) equal their hours."""
    ids = sorted({s.target for s in seeded})
    group = {t: i for i, t in enumerate(ids)}
    both = scope_counts(engine, group, len(ids), bounds, checks=True, start=DAY0, end=NOW, windows_s=(3600.0,))
    hourly = scope_counts(engine, group, len(ids), bounds, checks=True, start=DAY0, end=NOW, windows_s=(3 * 86400.0,))
    assert both.probes.tolist() == hourly.probes.tolist()
    assert both.good.tolist() == hourly.good.tolist()
    assert both.day_probes.sum() == both.probes.sum()
    assert both.day_good.ravel().tolist() == pytest.approx(hourly.day_good.ravel().tolist())


def test_two_bounds_count_a_probe_breaking_both_twice_at_most_its_ok_probes(engine, seeded):
    ids = sorted({s.target for s in seeded})
    group = {t: 0 for t in ids}
    bounds = [Bound("total_ms", below=2048.0), Bound("tps", above=64.0)]
    counts = scope_counts(engine, group, 1, bounds, checks=True, start=DAY0, end=NOW)
    measured = [s for s in seeded if s.error_kind != "cancelled"]
    ok = [s for s in measured if s.ok]
    over = sum(s.total_ms >= 2048 for s in ok) + sum(s.tps <= 64 for s in ok)  # each bound's bad, added
    assert counts.probes[0] == len(measured)
    # Both bounds cut a histogram bucket: each may be off by the probes of the one bucket it cuts.
    slack = sum(2016 <= s.total_ms < 2048 for s in ok) + sum(64 <= s.tps < 66 for s in ok)
    assert abs(int(counts.good[0]) - (len(ok) - min(over, len(ok)))) <= slack + 1


def test_a_cache_probes_warm_half_counts_like_any_probe(engine):
    """The rollups keep a warm half's TTFT apart from the route's (DESIGN §13); the SLO status reads
    both, as the live alerts judge every probe, so warm halves are neither lost nor counted bad."""
    import dataclasses

    data = [
        dataclasses.replace(s, cache_state="warm" if i % 2 else "cold", ttft_ms=s.ttft_ms and s.ttft_ms * (i % 3))
        for i, s in enumerate(samples()[: 3 * 600])
    ]
    insert_samples(engine, data)
    rollup_hours(engine, DAY0, NOW, now=NOW + timedelta(hours=1))
    config = load_config_text(CONFIG)
    report = slo_report(engine, config.slos[0], config.targets, NOW)
    expected = direct(data, DAY0, 1536.0, key=lambda s: s.target)
    assert {s.scope_key: [s.budget.probes, s.budget.good] for s in report.scopes} == expected
    assert any(s.cache_state == "warm" and s.ok and s.ttft_ms >= 1536 for s in data)  # warm probes can be bad too
