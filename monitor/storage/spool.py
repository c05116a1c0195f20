"""The local spool: where samples wait while the database is unreachable.

Append-only JSONL segment files `<seq>.jsonl` in one directory, one sample per
line, written a batch at a time and fsynced before `append` returns, so a
spooled sample survives a crash. Segments are replayed oldest first and each is
deleted only after its rows are committed; a crash between the commit and the
delete replays the segment again, which the idempotent sample ids absorb.

The spool is bounded by `max_bytes`: past it, whole segments are dropped oldest
first (counted in `dropped_samples`, logged as a WARNING) — a full disk or an
outage longer than the spool can hold loses the oldest data, never the process.
A directory lock keeps two processes from sharing one spool.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from monitor.sample import Sample

log = logging.getLogger(__name__)

SUFFIX = ".jsonl"
DEFAULT_MAX_BYTES = 1 << 30
DEFAULT_SEGMENT_BYTES = 4 << 20


@dataclass(frozen=True, slots=True)
class Segment:
    seq: int
    path: Path
    size_bytes: int
    samples: int


@dataclass(frozen=True, slots=True)
class SpoolStats:
    bytes: int
    segments: int
    samples: int
    dropped_samples: int
    corrupt_lines: int


class SpoolLockedError(RuntimeError):
    pass


class Spool:
    def __init__(
        self, directory: str | os.PathLike, *, max_bytes: int = DEFAULT_MAX_BYTES, segment_bytes: int | None = None
    ) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.max_bytes = max_bytes
        self.segment_bytes = segment_bytes or max(1, min(DEFAULT_SEGMENT_BYTES, max_bytes // 8))
        self.dropped_samples = 0
        self.corrupt_lines = 0
        self._lock = threading.RLock()
        self._lockfile = open(self.dir / ".lock", "a+")  # noqa: SIM115  (held for the spool's lifetime)
        try:
            fcntl.flock(self._lockfile, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lockfile.close()
            raise SpoolLockedError(f"spool directory {self.dir} is in use by another firsttoken process") from None
        # Sealed segments are never appended to again; the open one is the tail.
        self._sealed: list[Segment] = [self._scan(p) for p in sorted(self.dir.glob(f"*{SUFFIX}"))]
        self._next_seq = (self._sealed[-1].seq + 1) if self._sealed else 1
        self._open: Segment | None = None
        self._file = None

    @staticmethod
    def _scan(path: Path) -> Segment:
        data = path.read_bytes()
        return Segment(int(path.stem), path, len(data), data.count(b"\n"))

    # -- writing -------------------------------------------------------------

    def append(self, samples: Sequence[Sample]) -> bool:
        """Durably append a batch; False if some of it could not be stored (counted as dropped)."""
        lines = [json.dumps(s.to_dict(), separators=(",", ":"), default=str).encode() + b"\n" for s in samples]
        ok = True
        with self._lock:
            # In segment-sized pieces, so the size bound can drop the oldest part of a big batch.
            for data, count in _chunks(lines, self.segment_bytes):
                ok = self._append_chunk(data, count) and ok
        return ok

    def _append_chunk(self, data: bytes, count: int) -> bool:
        self._make_room(len(data))
        for attempt in range(2):
            try:
                self._write(data, count)
                return True
            except OSError as error:
                # Disk full or failing: give up the oldest data to save the newest.
                self._abandon_open_segment()
                if attempt == 0 and self._drop_oldest(f"spool write failed ({error})"):
                    continue
                self.dropped_samples += count
                log.warning("spool write failed (%s): dropped %d samples", error, count)
                return False
        return False

    def _write(self, data: bytes, count: int) -> None:
        if self._open is None or self._open.size_bytes + len(data) > self.segment_bytes:
            self._seal()
            path = self.dir / f"{self._next_seq:016d}{SUFFIX}"
            self._file = open(path, "ab")  # noqa: SIM115
            self._open = Segment(self._next_seq, path, 0, 0)
            self._next_seq += 1
            _fsync_dir(self.dir)
        assert self._file is not None
        self._file.write(data)
        self._file.flush()
        os.fsync(self._file.fileno())
        seg = self._open
        self._open = Segment(seg.seq, seg.path, seg.size_bytes + len(data), seg.samples + count)

    def _make_room(self, incoming: int) -> None:
        while self.total_bytes() + incoming > self.max_bytes:
            if not self._sealed:
                self._seal()
            if not self._drop_oldest(f"spool over its {self.max_bytes} byte limit"):
                return

    def _drop_oldest(self, why: str) -> bool:
        if not self._sealed:
            return False
        seg = self._sealed.pop(0)
        seg.path.unlink(missing_ok=True)
        self.dropped_samples += seg.samples
        log.warning("%s: dropped the oldest segment %s with %d samples", why, seg.path.name, seg.samples)
        return True

    def _seal(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._open is not None:
            if self._open.samples:
                self._sealed.append(self._open)
            else:
                self._open.path.unlink(missing_ok=True)
            self._open = None

    def _abandon_open_segment(self) -> None:
        # A partial write may have left a torn line; the reader skips it.
        try:
            self._seal()
        except OSError:
            self._file, self._open = None, None

    # -- replay --------------------------------------------------------------

    def oldest(self) -> Segment | None:
        """The next segment to replay; seals the tail so nothing appends to it meanwhile."""
        with self._lock:
            if not self._sealed:
                self._seal()
            return self._sealed[0] if self._sealed else None

    def read(self, segment: Segment) -> list[Sample]:
        """The samples of `segment`; none if its file was removed under us (it is then dropped
        like a replayed one, so the writer does not retry a file that will never come back)."""
        samples = []
        try:
            f = open(segment.path, "rb")  # noqa: SIM115  (closed by the with below)
        except FileNotFoundError:
            log.error("spool segment %s vanished (removed from outside?): its samples are lost", segment.path)
            return samples
        with f:
            for number, line in enumerate(f, 1):
                try:
                    samples.append(Sample.from_dict(json.loads(line)))
                except (ValueError, TypeError, KeyError) as error:
                    # A torn last line after a crash mid-write, or a damaged disk block.
                    self.corrupt_lines += 1
                    log.warning("spool %s line %d unreadable, skipped: %s", segment.path.name, number, error)
        return samples

    def remove(self, segment: Segment) -> None:
        """Call only after every row of the segment is committed."""
        with self._lock:
            if self._sealed and self._sealed[0].seq == segment.seq:
                self._sealed.pop(0)
            else:
                self._sealed = [s for s in self._sealed if s.seq != segment.seq]
            segment.path.unlink(missing_ok=True)

    # -- state ---------------------------------------------------------------

    def total_bytes(self) -> int:
        with self._lock:
            return sum(s.size_bytes for s in self._sealed) + (self._open.size_bytes if self._open else 0)

    def is_empty(self) -> bool:
        with self._lock:
            return not self._sealed and not (self._open and self._open.samples)

    def stats(self) -> SpoolStats:
        with self._lock:
            segments = [*self._sealed, *([self._open] if self._open and self._open.samples else [])]
            return SpoolStats(
                bytes=sum(s.size_bytes for s in segments),
                segments=len(segments),
                samples=sum(s.samples for s in segments),
                dropped_samples=self.dropped_samples,
                corrupt_lines=self.corrupt_lines,
            )

    def close(self) -> None:
        with self._lock:
            self._seal()
            if not self._lockfile.closed:
                fcntl.flock(self._lockfile, fcntl.LOCK_UN)
                self._lockfile.close()


def _chunks(lines: list[bytes], max_bytes: int) -> Iterator[tuple[bytes, int]]:
    chunk: list[bytes] = []
    size = 0
    for line in lines:
        if chunk and size + len(line) > max_bytes:
            yield b"".join(chunk), len(chunk)
            chunk, size = [], 0
        chunk.append(line)
        size += len(line)
    if chunk:
        yield b"".join(chunk), len(chunk)


def _fsync_dir(path: Path) -> None:
    # A new file's directory entry must be durable too, or a crash can lose the file.
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
