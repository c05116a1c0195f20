"""Where the probe gets its time: the real clocks, or a simulated one.

The probe reads two clocks: a monotonic nanosecond counter for durations
and UTC wall time as a label. Both come through a `Clock`, so the demo's
backfill can run the very same probe code over a day of simulated time in
seconds (its transport stamps reads in simulated time too).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def perf_ns(self) -> int: ...

    def utcnow(self) -> datetime: ...


class SystemClock:
    @staticmethod
    def perf_ns() -> int:
        return time.perf_counter_ns()

    @staticmethod
    def utcnow() -> datetime:
        return datetime.now(UTC)


SYSTEM_CLOCK = SystemClock()
