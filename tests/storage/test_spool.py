import logging

import pytest

from monitor.storage.spool import Spool, SpoolLockedError

from .factories import make_samples


def replay_all(spool: Spool) -> list:
    out = []
    while (segment := spool.oldest()) is not None:
        out += spool.read(segment)
        spool.remove(segment)
    return out


def test_append_read_remove_in_order(tmp_path):
    spool = Spool(tmp_path, segment_bytes=2_000)
    samples = make_samples(40)
    for i in range(0, 40, 7):
        assert spool.append(samples[i : i + 7])
    stats = spool.stats()
    assert stats.samples == 40 and stats.segments > 1 and stats.bytes > 0
    assert replay_all(spool) == samples
    assert spool.is_empty() and spool.stats().bytes == 0
    spool.close()


def test_spool_survives_a_restart(tmp_path):
    samples = make_samples(10)
    first = Spool(tmp_path)
    first.append(samples[:6])
    first.close()
    second = Spool(tmp_path)
    second.append(samples[6:])
    assert second.stats().samples == 10
    assert replay_all(second) == samples
    second.close()


def test_over_the_limit_the_oldest_segment_is_dropped_and_counted(tmp_path, caplog):
    samples = make_samples(200)
    spool = Spool(tmp_path, max_bytes=30_000, segment_bytes=6_000)
    with caplog.at_level(logging.WARNING, logger="monitor.storage.spool"):
        for i in range(0, 200, 10):
            assert spool.append(samples[i : i + 10])
    stats = spool.stats()
    assert stats.bytes <= 30_000
    assert stats.dropped_samples > 0
    assert stats.dropped_samples + stats.samples == 200
    kept = replay_all(spool)
    assert kept == samples[stats.dropped_samples :]  # the newest survive, in order
    assert any("dropped the oldest segment" in r.getMessage() for r in caplog.records)
    spool.close()


def test_disk_full_drops_oldest_instead_of_crashing(tmp_path, monkeypatch):
    spool = Spool(tmp_path, segment_bytes=1_000)
    samples = make_samples(30)
    spool.append(samples[:10])
    spool.append(samples[10:20])
    real_write = Spool._write
    calls = {"n": 0}

    def failing_once(self, data, count):
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError(28, "No space left on device")
        return real_write(self, data, count)

    monkeypatch.setattr(Spool, "_write", failing_once)
    assert spool.append(samples[20:])
    assert spool.stats().dropped_samples > 0
    assert replay_all(spool)[-10:] == samples[20:]
    spool.close()


def test_a_torn_last_line_is_skipped(tmp_path):
    spool = Spool(tmp_path)
    samples = make_samples(5)
    spool.append(samples)
    spool.close()
    (path,) = tmp_path.glob("*.jsonl")
    with open(path, "ab") as f:
        f.write(b'{"target": "half a li')  # the crash happened mid-write
    again = Spool(tmp_path)
    assert replay_all(again) == samples
    assert again.stats().corrupt_lines == 1
    again.close()


def test_one_process_per_spool_directory(tmp_path):
    spool = Spool(tmp_path)
    with pytest.raises(SpoolLockedError):
        Spool(tmp_path)
    spool.close()
    Spool(tmp_path).close()


def test_a_segment_removed_from_outside_is_dropped_not_retried_forever(tmp_path, caplog):
    spool = Spool(tmp_path, segment_bytes=2_000)
    samples = make_samples(40)
    for i in range(0, 40, 7):
        spool.append(samples[i : i + 7])
    first = spool.oldest()
    first.path.unlink()  # an operator's rm, a tmp cleaner
    with caplog.at_level(logging.ERROR, logger="monitor.storage.spool"):
        assert spool.read(first) == []
    assert "vanished" in caplog.text
    spool.remove(first)
    rest = replay_all(spool)
    assert rest and rest == samples[len(samples) - len(rest) :]  # the later segments still replay, in order
    assert spool.is_empty()
    spool.close()


def test_a_spool_written_before_migration_0013_keeps_its_cache_reads(tmp_path):
    """An agent upgraded with samples still spooled: lines that hold the older `cached_input_tokens`
    alone (before 0012) or beside `cache_read_tokens` (0012) replay with the figure in its one field."""
    import json
    from dataclasses import replace

    older = make_samples(3)
    spool = Spool(tmp_path)
    spool.append(older)
    spool.close()
    (path,) = tmp_path.glob("*.jsonl")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    lines[0]["cached_input_tokens"] = 900  # pre-0012: the older name only
    lines[1].update(cached_input_tokens=5, cache_read_tokens=5)  # 0012: both
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    again = Spool(tmp_path)
    assert replay_all(again) == [
        replace(older[0], cache_read_tokens=900),
        replace(older[1], cache_read_tokens=5),
        older[2],
    ]
    again.close()
