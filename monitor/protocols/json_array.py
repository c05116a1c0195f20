"""Incremental framing for a streamed JSON array: `[{…},{…}]`, element by element.

Gemini's `streamGenerateContent` without `alt=sse` sends its chunks this way
(pretty-printed, `\r\n,\r\n` between elements). Bounded: an element longer
than MAX_ELEMENT_BYTES is a protocol violation raised as soon as the buffer
passes it. Strict: an element that is not UTF-8 is a protocol violation.
"""

from __future__ import annotations

import re

from monitor.protocols.base import ProtocolViolation

# One element is one response chunk; even with a long thought signature
# they stay in the kilobytes. Anything larger is not a chunk.
MAX_ELEMENT_BYTES = 4 << 20
WHITESPACE = b" \t\r\n"
_IN_STRING = re.compile(rb'["\\]')
_STRUCTURAL = re.compile(rb'[{}\[\]"]')


class JsonArraySplitter:
    """Yields each top-level element of a streamed JSON array as text.

    Tracks only nesting depth and string state, jumping between structural
    bytes with a regex, so a read costs little more than a scan. UTF-8 never
    encodes a non-ASCII character with ASCII bytes, so scanning bytes is safe;
    each element is decoded strictly once complete. Memory is bounded by
    MAX_ELEMENT_BYTES.
    """

    __slots__ = ("_buf", "_depth", "_escape", "_expect", "_in_string", "_scan")

    def __init__(self) -> None:
        self._buf = bytearray()  # the element being read (or separators between elements)
        self._scan = 0  # how far into _buf has been scanned
        self._depth = 0
        self._in_string = False
        self._escape = False
        # What may come next outside an element: "[" to open, "{]" for the
        # first element, ",]" after one, "{" after a comma, "" once closed.
        self._expect = b"["

    def feed(self, data: bytes) -> list[str]:
        out: list[str] = []
        buf = self._buf
        buf += data
        i = self._scan
        while i < len(buf):
            if self._in_string:
                if self._escape:
                    self._escape, i = False, i + 1
                    continue
                m = _IN_STRING.search(buf, i)
                if m is None:
                    i = len(buf)
                    break
                i = m.end()
                if m.group() == b"\\":
                    self._escape = True
                else:
                    self._in_string = False
                continue
            if self._depth == 0:
                i = self._between(buf, i)
                continue
            m = _STRUCTURAL.search(buf, i)
            if m is None:
                i = len(buf)
                break
            i, byte = m.end(), m.group()
            if byte == b'"':
                self._in_string = True
            elif byte in b"{[":
                self._depth += 1
            else:
                self._depth -= 1
                if self._depth == 0:
                    out.append(_decode(bytes(buf[:i])))
                    del buf[:i]
                    i = 0
        if self._depth == 0:  # separators already read need not be kept
            del buf[:i]
            i = 0
        self._scan = i
        if len(buf) > MAX_ELEMENT_BYTES:
            raise ProtocolViolation(f"JSON array element longer than {MAX_ELEMENT_BYTES} bytes")
        return out

    def _between(self, buf: bytearray, i: int) -> int:
        """Outside any element: the array's brackets, commas and whitespace."""
        byte = buf[i]
        if byte in WHITESPACE:
            return i + 1
        if byte not in self._expect:
            raise ProtocolViolation(f"unexpected {bytes([byte])!r} in a JSON array stream, wanted {self._expect!r}")
        if byte == ord("{"):
            del buf[:i]  # the element starts here: drop the separators before it
            self._depth, self._expect = 1, b",]"
            return 1
        self._expect = {ord("["): b"{]", ord(","): b"{", ord("]"): b""}[byte]
        return i + 1

    def close(self) -> list[str]:
        # An unfinished element or a missing ']' means the body was cut off;
        # the missing finishReason reports that as `truncated`.
        return []


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolViolation(f"invalid UTF-8 at byte {exc.start} of a JSON element") from None
