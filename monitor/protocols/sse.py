"""Incremental framing shared by the text protocols: lines, SSE events, NDJSON.

Bounded: a line longer than `max_line_bytes` is a protocol violation raised
as soon as the buffer passes the limit, so a 10 MB line never sits in memory.
Strict: bytes that are not UTF-8 are a protocol violation.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from monitor.protocols.base import Event, ProtocolViolation, StreamParser

MAX_LINE_BYTES = 1 << 20  # 1 MiB: far above any real event, far below trouble
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")


class LineSplitter:
    """Splits a byte stream on CRLF, LF or CR into decoded lines.

    Only each new read is scanned for line breaks: the partial line held
    from earlier reads has none, so rescanning it (and re-copying it into one
    buffer) made a long line cost quadratic time, and a 10 MB line stalled the
    event loop, and every probe on it, for a quarter of a second.
    """

    __slots__ = ("_cr", "_max", "_parts", "_size")

    def __init__(self, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self._parts: list[bytes] = []  # the line being read, still without its end
        self._size = 0
        self._cr = False  # a CR ended the last read: maybe the first half of a CRLF
        self._max = max_line_bytes

    def feed(self, data: bytes) -> list[str]:
        if self._cr:
            data = b"\r" + data
        # A CR at the very end may be the first half of a CRLF split across
        # reads: hold it back so the next read sees no phantom blank line.
        self._cr = data.endswith(b"\r")
        if self._cr:
            data = data[:-1]
        if b"\n" in data or b"\r" in data:
            lines = _LINE_BREAK.split(data)
            rest = lines.pop()
        else:  # the middle of a long line: two memchr scans, no regex
            lines, rest = [], data
        if lines and self._parts:
            lines[0] = b"".join((*self._parts, lines[0]))
            self._parts, self._size = [], 0
        if rest:
            self._parts.append(rest)
            self._size += len(rest)
        if self._size + self._cr > self._max:
            raise ProtocolViolation(f"line longer than {self._max} bytes")
        return [_decode(line) for line in lines]

    def close(self) -> list[str]:
        rest = b"".join(self._parts)
        self._parts, self._size, self._cr = [], 0, False
        return [_decode(rest)] if rest else []


def _decode(line: bytes) -> str:
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolViolation(f"invalid UTF-8 at byte {exc.start} of a line") from None


@dataclass(frozen=True, slots=True)
class SSEEvent:
    event: str  # "" when the stream names none (the spec's "message")
    data: str


class SSEDecoder:
    """Server-sent events, tolerant of what real providers send.

    Comments (`:` lines, e.g. OpenRouter's `: OPENROUTER PROCESSING`) are
    dropped. Each `data:` line is dispatched as its own event the moment
    its line ends, without waiting for the blank line: no LLM provider
    sends multi-line data, llama.cpp builds have been recorded separating
    events with a single newline, and waiting for the next line would stamp
    every event one read late on such a host.
    """

    __slots__ = ("_event", "_lines", "comments")

    def __init__(self, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self._lines = LineSplitter(max_line_bytes)
        self._event = ""
        self.comments = 0

    def feed(self, data: bytes) -> list[SSEEvent]:
        return self._handle(self._lines.feed(data))

    def close(self) -> list[SSEEvent]:
        out = self._handle(self._lines.close())
        self._event = ""
        return out

    def _handle(self, lines: list[str]) -> list[SSEEvent]:
        out: list[SSEEvent] = []
        for line in lines:
            if not line:
                self._event = ""  # the blank line ends the event
                continue
            if line[0] == ":":
                self.comments += 1
                continue
            name, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if name == "data":
                out.append(SSEEvent(self._event, value))
            elif name == "event":
                self._event = value
            # id:, retry: and unknown fields carry nothing we measure
        return out


def loads_json(text: str, what: str = "event") -> Any:
    try:
        return json.loads(text)
    except ValueError:
        snippet = text[:80]
        raise ProtocolViolation(f"malformed JSON in {what}: {snippet!r}") from None


def as_int(value: Any) -> int | None:
    """An integer count from a usage field, tolerating floats and junk."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


class SSEStreamParser(StreamParser):
    """A parser whose events arrive as SSE: subclasses handle one event at a time.

    A body cut off mid-event is truncated, not malformed: the unterminated
    tail is dropped and the missing terminal event reports `truncated`.
    """

    def __init__(self) -> None:
        self._sse = SSEDecoder()

    def feed(self, data: bytes) -> list[Event]:
        out: list[Event] = []
        for ev in self._sse.feed(data):
            self._on_event(ev.event, ev.data, out)
        return out

    def close(self) -> list[Event]:
        out: list[Event] = []
        try:
            for ev in self._sse.close():
                self._on_event(ev.event, ev.data, out)
        except ProtocolViolation:
            pass
        out.extend(self._on_close())
        return out

    def _on_event(self, name: str, data: str, out: list[Event]) -> None:
        raise NotImplementedError

    def _on_close(self) -> list[Event]:
        """Events the end of the body implies (none by default)."""
        return []
