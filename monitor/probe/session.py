"""One response body being parsed and measured, read by read.

The live probe (`runner.py`) feeds it each read as the bytes arrive; `replay.py`
feeds it recorded reads. Either way a parser failure becomes a protocol error
kind, never an exception.
"""

from __future__ import annotations

from monitor.probe.measure import StreamMeasurement
from monitor.protocols.base import ProtocolViolation, StreamParser
from monitor.sample import ErrorKind


class StreamSession:
    """One response body being parsed and measured, read by read."""

    __slots__ = ("_parser", "measurement", "violation")

    def __init__(self, parser: StreamParser, t0_ns: int, keep_answer: bool = True) -> None:
        self._parser = parser
        self.measurement = StreamMeasurement(t0_ns, keep_answer)
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
