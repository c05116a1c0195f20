"""AWS `application/vnd.amazon.eventstream` message encoding.

A message is: total length (4 bytes), headers length (4), CRC32 of those 8
bytes (4), headers, payload, CRC32 of everything before it (4), big-endian.
Every header here is a string (type 7): 1-byte name length, name, type,
2-byte value length, value.
"""

from __future__ import annotations

import functools
import struct
import zlib
from collections.abc import Iterable

PRELUDE_BYTES = 12
CRC_BYTES = 4
_STRING = 7


def encode_headers(headers: Iterable[tuple[str, str]]) -> bytes:
    out = bytearray()
    for name, value in headers:
        raw_name, raw_value = name.encode(), value.encode()
        out += struct.pack(">B", len(raw_name)) + raw_name + struct.pack(">BH", _STRING, len(raw_value)) + raw_value
    return bytes(out)


def encode_message(headers: Iterable[tuple[str, str]], payload: bytes) -> bytes:
    return encode_raw(encode_headers(headers), payload)


def encode_raw(raw_headers: bytes, payload: bytes) -> bytes:
    total = PRELUDE_BYTES + len(raw_headers) + len(payload) + CRC_BYTES
    prelude = struct.pack(">II", total, len(raw_headers))
    head = prelude + struct.pack(">I", zlib.crc32(prelude)) + raw_headers
    crc = zlib.crc32(payload, zlib.crc32(head))
    return head + payload + struct.pack(">I", crc)


@functools.lru_cache(maxsize=64)
def event_headers(event_type: str) -> bytes:
    return encode_headers(
        ((":event-type", event_type), (":content-type", "application/json"), (":message-type", "event"))
    )


def event(event_type: str, payload: bytes) -> bytes:
    return encode_raw(event_headers(event_type), payload)


def exception(exception_type: str, payload: bytes) -> bytes:
    return encode_message(
        ((":exception-type", exception_type), (":content-type", "application/json"), (":message-type", "exception")),
        payload,
    )
