"""The backfill: probe grid, ordering, alert rounds, and workers that give the same history."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest

from monitor.agent.scheduler import phase_offset_s
from monitor.config import load_config
from monitor.demo.backfill import Job, WorkerPool, auto_interval_s, backfill, history_end_s, probe_times
from monitor.demo.cast import long_prompt_text
from monitor.demo.demo_config import LONG_PROMPT_FILE, config_text
from monitor.demo.incidents import HOUR_S, schedule

EPOCH_S = 1_780_000_000.0


@pytest.fixture
def demo_config(tmp_path: Path) -> Path:
    (tmp_path / LONG_PROMPT_FILE).parent.mkdir(parents=True)
    (tmp_path / LONG_PROMPT_FILE).write_text(long_prompt_text())
    path = tmp_path / "firsttoken.yaml"
    path.write_text(config_text(simulator_url="http://127.0.0.1:9", database_url=f"sqlite:///{tmp_path}/d.db"))
    return path


def job_for(config_path: Path, history_s: float, interval_s: float, seed: int = 3, model: str = "*") -> Job:
    ids = tuple(t.id for t in load_config(config_path).targets if model in ("*", t.model))
    return Job(str(config_path), ids, schedule(EPOCH_S, history_s), interval_s, "demo", seed)


def test_spacing_scales_with_the_history_which_ends_on_its_grid():
    assert auto_interval_s(24 * HOUR_S) == 300 and auto_interval_s(3 * HOUR_S) == 60
    assert auto_interval_s(30 * 24 * HOUR_S) == 300  # a month stays at 5 minutes, it just takes longer
    on_grid = EPOCH_S - EPOCH_S % 300
    assert history_end_s(on_grid, 300) == history_end_s(on_grid + 299.9, 300) == on_grid


def test_probe_times_follow_each_targets_scheduler_phase_in_time_order(demo_config):
    targets = load_config(demo_config).targets
    times = list(probe_times(targets, EPOCH_S - HOUR_S, EPOCH_S, 300))
    assert len(times) == len(targets) * 12
    assert [t for t, _ in times] == sorted(t for t, _ in times)
    for t_s, i in times:
        assert EPOCH_S - HOUR_S <= t_s < EPOCH_S
        assert (t_s - phase_offset_s(targets[i].id, 300)) % 300 == pytest.approx(0, abs=1e-6)


def test_backfill_submits_in_order_and_evaluates_after_flushing(demo_config):
    job = job_for(demo_config, 2 * HOUR_S, 300)
    events: list[tuple] = []
    result = asyncio.run(
        backfill(
            job,
            start_s=EPOCH_S - 2 * HOUR_S,
            end_s=EPOCH_S,
            submit=lambda s: events.append(("sample", s.started_at, s)),
            flush=lambda: events.append(("flush",)),
            evaluate=lambda now: events.append(("evaluate", now)),
            evaluate_every_s=900,
        )
    )
    samples = [e[1] for e in events if e[0] == "sample"]
    # 28 targets, 24 probes each in 2 h at 5 min; the 4 cache targets send a cold and a warm request a round
    assert result.probes == len(samples) == (28 + 4 * 2) * 24
    assert samples == sorted(samples)
    rounds = [e[1] for e in events if e[0] == "evaluate"]
    # On the epoch grid of the step (as the live leader and `backtest --samples` fall), through the end.
    grid = range(int(EPOCH_S - 2 * HOUR_S) // 900 * 900 + 900, int(EPOCH_S) + 1, 900)
    assert rounds == [datetime.fromtimestamp(t, UTC) for t in grid] and len(rounds) == 8
    for k, event in enumerate(events):
        if event[0] == "evaluate":
            assert events[k - 1] == ("flush",)
            # Every sample taken before the round's `now` is in; none after it.
            before = [e[1] for e in events[:k] if e[0] == "sample"]
            after = [e[1] for e in events[k:] if e[0] == "sample"]
            assert all(t <= event[1] for t in before) and all(t >= event[1] for t in after)
    assert result.ok + sum(result.errors.values()) == result.probes
    # Every provider, region and prompt of the cast is in the history.
    targets = load_config(demo_config).targets
    assert {s.target for s in samples_of(events)} == {t.id for t in targets}


def samples_of(events):
    return [e[2] for e in events if e[0] == "sample"]


def test_the_history_carries_the_incidents(demo_config):
    history_s = 3 * HOUR_S
    job = job_for(demo_config, history_s, 60, model="gemini-2.5-flash")
    samples = []
    asyncio.run(backfill(job, start_s=EPOCH_S - history_s, end_s=EPOCH_S, submit=samples.append))
    limited = next(i for i in job.incidents if "rate limited" in i.name and i.start_s < EPOCH_S)
    during = [
        s
        for s in samples
        if s.model == "gemini-2.5-flash" and limited.start_s <= s.started_at.timestamp() < limited.end_s
    ]
    outside = [s for s in samples if s.model == "gemini-2.5-flash" and s.started_at.timestamp() < limited.start_s]
    assert len(during) >= 4 * 30 and len(outside) >= 4 * 60
    assert sum(s.error_kind == "rate_limited" for s in during) / len(during) > 0.4
    assert sum(s.error_kind == "rate_limited" for s in outside) == 0


def test_worker_processes_give_the_same_history_as_one_process(demo_config):
    job = job_for(demo_config, HOUR_S, 300)
    kwargs = {"start_s": EPOCH_S - HOUR_S, "end_s": EPOCH_S}

    def run(pool):
        out = []
        asyncio.run(backfill(job, submit=out.append, pool=pool, **kwargs))
        return [(s.id, s.target, s.started_at, s.ok, s.error_kind, s.ttft_ms, s.total_ms, s.output_tokens) for s in out]

    pool = WorkerPool(2)  # the blocks, so their draws and their samples' ids, are the pool's business only
    try:
        assert run(pool) == run(None)
    finally:
        pool.close()


def test_backfilled_samples_of_priced_models_carry_their_cost(demo_config):
    from monitor.demo.backfill import probe_span

    job = job_for(demo_config, HOUR_S, 600)
    targets, source, prices = job.load()
    assert any(p is not None for p in prices)
    samples = [
        s
        for _, s in asyncio.run(
            probe_span(targets, source, EPOCH_S - HOUR_S, EPOCH_S, 600, agent="demo", prices=prices)
        )
    ]
    priced = {t.id for t, p in zip(targets, prices, strict=True) if p is not None}
    with_tokens = [s for s in samples if s.target in priced and s.output_tokens]
    assert with_tokens and all(s.cost_usd and s.cost_usd > 0 for s in with_tokens)
    assert all(s.cost_usd is None for s in samples if s.target not in priced)
