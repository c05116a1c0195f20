"""Run a protocol parser over timestamped reads without a network. Pure.

The probe does the same per read while bytes arrive; this is the offline twin
used for recorded streams, fuzzing and benchmarks. Any failure comes back as
an error kind, never as an exception.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from monitor.measure import StreamMeasurement, StreamMetrics
from monitor.protocols.base import ProtocolViolation, StreamParser, WireProtocol
from monitor.sample import ErrorKind


@dataclass(frozen=True, slots=True)
class ReplayResult:
    metrics: StreamMetrics
    error_kind: ErrorKind | None
    error_message: str | None

    @property
    def ok(self) -> bool:
        return self.error_kind is None


class StreamSession:
    """One response body being parsed and measured, read by read."""

    __slots__ = ("_parser", "measurement", "violation")

    def __init__(self, parser: StreamParser, t0_ns: int) -> None:
        self._parser = parser
        self.measurement = StreamMeasurement(t0_ns)
        self.violation: str | None = None

    def feed(self, t_ns: int, data: bytes) -> bool:
        """Parse one read stamped `t_ns`. False once the stream is unusable."""
        if self.violation is not None:
            return False
        try:
            self.measurement.add(t_ns, self._parser.feed(data))
        except ProtocolViolation as exc:
            self.violation = str(exc)
            return False
        except Exception as exc:  # a parser bug must not crash the probe
            self.violation = f"unparseable stream ({type(exc).__name__})"
            return False
        return True

    def close(self, t_ns: int) -> None:
        if self.violation is not None:
            return
        try:
            self.measurement.add(t_ns, self._parser.close())
        except ProtocolViolation as exc:
            self.violation = str(exc)
        except Exception as exc:
            self.violation = f"unparseable stream ({type(exc).__name__})"

    def outcome(self) -> tuple[ErrorKind | None, str | None]:
        if self.violation is not None:
            return ErrorKind.PROTOCOL, self.violation
        return self.measurement.outcome()


def replay(protocol: WireProtocol, reads: Iterable[tuple[int, bytes]], t0_ns: int = 0) -> ReplayResult:
    session = StreamSession(protocol.new_parser(), t0_ns)
    t_ns = t0_ns
    for t_ns, data in reads:
        if not session.feed(t_ns, data):
            break
    else:
        session.close(t_ns)
    kind, message = session.outcome()
    return ReplayResult(session.measurement.metrics(end_ns=t_ns), kind, message)
