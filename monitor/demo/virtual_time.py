"""Simulated time for the backfill: a settable clock and an httpx transport that never waits.

The probe reads time in two places: its `Clock` (t0, the wall-clock label,
the end) and `trace.read_ns`, the instant the bytes of a read arrived, which
the real network backend sets. `VirtualTransport` answers each request from
the simulator's pure timeline (`monitor.simulator.timeline`) and, before
handing each piece to httpx, moves the clock to that piece's arrival time and
stamps `trace.read_ns` with it. The probe's parser, measurement, deadline
checks and sample assembly then run unchanged, and the measured TTFT is the
planned one to the nanosecond: a day of history costs CPU, not a day.

One clock serves one probe at a time: run backfill probes one after another
(they take microseconds of real time each, so nothing is gained by overlap).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from urllib.parse import parse_qsl

import httpx

from monitor.probe.transport.trace import CURRENT_TRACE, ConnectionTrace
from monitor.simulator.catalogue import BehaviourSource
from monitor.simulator.prefix_cache import PrefixCache
from monitor.simulator.request import Request
from monitor.simulator.timeline import Timeline, respond

NS_PER_S = 1_000_000_000


class VirtualClock:
    """A `monitor.probe.clock.Clock` whose time only moves when told to.

    `perf_ns()` is wall time in epoch nanoseconds, so durations and labels
    come from one number and `utcnow()` agrees with it exactly.
    """

    __slots__ = ("now_ns",)

    def __init__(self, now_ns: int = 0) -> None:
        self.now_ns = now_ns

    def perf_ns(self) -> int:
        return self.now_ns

    def utcnow(self) -> datetime:
        seconds, ns = divmod(self.now_ns, NS_PER_S)
        return datetime.fromtimestamp(seconds, UTC).replace(microsecond=ns // 1000)

    def set_s(self, epoch_s: float) -> None:
        """Jump to `epoch_s` (backwards too: each backfill probe starts where it is scheduled)."""
        self.now_ns = round(epoch_s * NS_PER_S)

    def advance_to(self, t_ns: int) -> None:
        self.now_ns = max(self.now_ns, t_ns)


class VirtualTransport(httpx.AsyncBaseTransport):
    """Serves requests from a `BehaviourSource` in `clock` time; no sockets, no sleeping.

    `last` is the latest response's timeline, for tests that compare what
    was measured with what was planned.
    """

    def __init__(
        self,
        source: BehaviourSource,
        clock: VirtualClock,
        *,
        seed: int | None = None,
        path_ms: Callable[[float], float] | None = None,
    ) -> None:
        self.source = source
        self.clock = clock
        # A vantage point's own network path (DESIGN §11): the request reaches the server this much later
        # (epoch seconds -> ms), so the headers and every token do too.
        self.path_ms = path_ms
        self.rng = random.Random(seed)
        self.prefix_cache = PrefixCache()  # in simulated time, like everything the backfill plays
        self._ids = itertools.count(1)
        self.last: Timeline | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        arrival_ns = self.clock.perf_ns()
        if self.path_ms is not None:
            arrival_ns += int(self.path_ms(arrival_ns / NS_PER_S) * 1e6)
        request_id = f"req_virtual{next(self._ids):012x}"
        raw = request.url.raw_path.decode("ascii")
        path, _, query = raw.partition("?")
        sim_request = Request(
            method=request.method,
            target=raw,
            path=path,
            query=dict(parse_qsl(query, keep_blank_values=True)),
            headers={k.decode("latin-1").lower(): v.decode("latin-1") for k, v in request.headers.raw},
            body=request.content,
            version="HTTP/1.1",
            arrival_ns=arrival_ns,
            keep_alive=True,
        )
        timeline = respond(
            sim_request,
            self.source,
            self.rng,
            now_s=arrival_ns / NS_PER_S,
            request_id=request_id,
            prefix_cache=self.prefix_cache,
        )
        self.last = timeline
        trace = request.extensions.get("trace") or CURRENT_TRACE.get()
        headers_ns = arrival_ns + timeline.headers_ns
        self.clock.advance_to(headers_ns)
        if isinstance(trace, ConnectionTrace):
            trace.headers_ns = trace.read_ns = headers_ns
        return httpx.Response(
            timeline.status,
            headers=list(timeline.headers),
            stream=_TimedBody(timeline, arrival_ns, self.clock, trace),
            request=request,
        )


class _TimedBody(httpx.AsyncByteStream):
    def __init__(self, timeline: Timeline, arrival_ns: int, clock: VirtualClock, trace) -> None:
        self.timeline, self.arrival_ns, self.clock = timeline, arrival_ns, clock
        self.trace = trace if isinstance(trace, ConnectionTrace) else None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self.timeline.pieces:
            t_ns = self.arrival_ns + piece.offset_ns
            self.clock.advance_to(t_ns)
            if self.trace is not None:
                self.trace.read_ns = t_ns
            yield piece.data
        if self.timeline.ending == "reset":
            raise httpx.ReadError("[Errno 104] Connection reset by peer")

    async def aclose(self) -> None:
        pass
