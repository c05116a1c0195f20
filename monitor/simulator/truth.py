"""What the simulator really did for each request: the benchmarks' ground truth.

Times are `time.perf_counter_ns()` (CLOCK_MONOTONIC on Linux), so a client in
another process on the same machine can subtract them from its own stamps.
A record is created on arrival and filled in as the stream goes, so it can be
read while the request is still running (`completed` is false until then).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

MAX_RECORDS = 100_000


@dataclass(slots=True)
class TruthRecord:
    request_id: str
    protocol: str
    model: str
    arrival_ns: int  # the last byte of the request was read
    region: str | None = None
    status: int | None = None  # HTTP status sent
    fault: str | None = None  # the fault applied to this request, if any
    headers_sent_ns: int | None = None
    first_token_ns: int | None = None  # just before the write of the first token-bearing chunk
    first_answer_ns: int | None = None  # same, first answer (not reasoning) chunk
    last_token_ns: int | None = None
    end_ns: int | None = None  # response finished, broken or abandoned
    token_count: int = 0  # output tokens sent, reasoning included
    reasoning_tokens: int = 0
    prompt_tokens: int = 0
    planned_ttft_ms: float | None = None  # the schedule, jitter and spikes included
    completed: bool = False  # the protocol's terminal event was sent
    client_gone: bool = False  # the client went away first
    body_sha256: str | None = None  # of the request body: equal bodies, equal prompts

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class TruthStore:
    """The last `max_records` records by request id, plus an optional JSONL log."""

    def __init__(self, max_records: int = MAX_RECORDS, log_path: str | Path | None = None) -> None:
        self._records: OrderedDict[str, TruthRecord] = OrderedDict()
        self._max = max_records
        self._lock = threading.Lock()  # readers may be on another thread (SimulatorThread)
        self._log: TextIO | None = open(log_path, "a", encoding="utf-8") if log_path else None  # noqa: SIM115

    def add(self, record: TruthRecord) -> None:
        with self._lock:
            self._records[record.request_id] = record
            if len(self._records) > self._max:
                self._records.popitem(last=False)

    def get(self, request_id: str) -> TruthRecord | None:
        with self._lock:
            return self._records.get(request_id)

    def __len__(self) -> int:
        return len(self._records)

    def finish(self, record: TruthRecord) -> None:
        """The request is over: write its line to the log, if there is one."""
        if self._log is not None:
            # One line per request, flushed, so a reader can follow the file live.
            self._log.write(json.dumps(record.to_dict(), separators=(",", ":")) + "\n")
            self._log.flush()

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None
