"""Run a protocol parser over timestamped reads without a network. Pure.

The probe does the same per read while bytes arrive; this is the offline twin
used for recorded streams, fuzzing and benchmarks. Any failure comes back as
an error kind, never as an exception.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from monitor.probe.measure import Answer, StreamMetrics
from monitor.probe.session import StreamSession
from monitor.protocols.base import WireProtocol
from monitor.protocols.route import RouteTruth
from monitor.sample import ErrorKind


@dataclass(frozen=True, slots=True)
class ReplayResult:
    metrics: StreamMetrics
    error_kind: ErrorKind | None
    error_message: str | None
    route: RouteTruth
    answer: Answer | None = None  # the assembled answer text and tool calls, for `expect` checks
    request_id: str | None = None  # as the live probe keeps it: the headers' id, else the body's

    @property
    def ok(self) -> bool:
        return self.error_kind is None


def replay(
    protocol: WireProtocol,
    reads: Iterable[tuple[int, bytes]],
    t0_ns: int = 0,
    headers: Mapping[str, str] | None = None,
    pinned_route: str | None = None,
) -> ReplayResult:
    """`headers` (a recorded response's) and `pinned_route` give the route truth and
    request id the live probe would record; without them only the stream's own naming counts."""
    session = StreamSession(protocol.new_parser(), t0_ns)
    t_ns = t0_ns
    for t_ns, data in reads:
        if not session.feed(t_ns, data):
            break
    else:
        session.close(t_ns)
    kind, message = session.outcome()
    measurement = session.measurement
    metrics = measurement.metrics(end_ns=t_ns)
    route = protocol.route_truth(headers, metrics.served_by, metrics.system_fingerprint, pinned_route)
    request_id = protocol.request_id(headers, metrics.request_id)
    return ReplayResult(metrics, kind, message, route, measurement.answer(), request_id)
