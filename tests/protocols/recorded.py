"""Helpers for recorded-stream tests: split wire data into its events, build frames.

The splitters are deliberately independent of the parsers under test (plain
line handling, `json.raw_decode`, the event-stream length prefix), so feeding
event k as a read stamped k ms tells exactly which event a metric landed on.
"""

from __future__ import annotations

import contextlib
import json
import re
import struct
import zlib
from collections import defaultdict
from pathlib import Path

from monitor.probe.replay import ReplayResult, replay
from monitor.protocols.base import ProtocolViolation, TokenDelta, WireProtocol

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "streams"
NS_PER_MS = 1_000_000
_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\n|\r)|[^\r\n]+$")


def sse_events(raw: bytes) -> list[bytes]:
    """SSE events, each with its terminating blank line(s).

    A `data:` line that follows another without a blank line starts a new
    event (llama.cpp builds separate events with a single newline).
    """
    events: list[bytes] = []
    current: list[bytes] = []
    has_field = False
    for line in _LINE.findall(raw):
        blank = not line.strip(b"\r\n")
        if blank:
            if has_field or not events:
                current.append(line)
                events.append(b"".join(current))
                current, has_field = [], False
            else:  # an extra blank line belongs to the event it follows
                events[-1] += line
            continue
        if line.startswith(b"data:") and any(part.startswith(b"data:") for part in current):
            events.append(b"".join(current))
            current = []
        current.append(line)
        has_field = True
    if current:
        events.append(b"".join(current))
    return events


def ndjson_lines(raw: bytes) -> list[bytes]:
    return raw.splitlines(keepends=True)


def json_array_elements(raw: bytes) -> list[bytes]:
    """A streamed JSON array cut so that piece k completes element k."""
    text = raw.decode("utf-8")
    decoder = json.JSONDecoder()
    pos = text.index("[") + 1
    cuts = []
    while True:
        while text[pos] in " \t\r\n,":
            pos += 1
        if text[pos] == "]":
            break
        _, pos = decoder.raw_decode(text, pos)
        cuts.append(pos)
    pieces, start = [], 0
    for end in cuts[:-1]:
        pieces.append(text[start:end])
        start = end
    pieces.append(text[start:])  # the last element takes the closing bracket
    return [p.encode("utf-8") for p in pieces]


def eventstream_frames(raw: bytes) -> list[bytes]:
    frames, pos = [], 0
    while pos < len(raw):
        (total,) = struct.unpack_from("!I", raw, pos)
        frames.append(raw[pos : pos + total])
        pos += total
    return frames


def split_events(folder: str, raw: bytes) -> list[bytes]:
    if folder == "bedrock":
        return eventstream_frames(raw)
    if folder == "ollama":
        return ndjson_lines(raw)
    if folder == "gemini" and raw.lstrip()[:1] == b"[":
        return json_array_elements(raw)
    return sse_events(raw)


def replay_stamped(protocol: WireProtocol, pieces: list[bytes]) -> ReplayResult:
    """Feed piece k as a read arriving at k ms."""
    return replay(protocol, [(k * NS_PER_MS, piece) for k, piece in enumerate(pieces)])


def text_by_kind(protocol: WireProtocol, pieces: list[bytes]) -> dict[str, str]:
    """Everything the parser emitted as tokens, joined per kind."""
    parser = protocol.new_parser()
    events = [e for piece in pieces for e in parser.feed(piece)] + parser.close()
    joined: dict[str, list[str]] = defaultdict(list)
    for event in events:
        if isinstance(event, TokenDelta):
            joined[str(event.kind)].append(event.text)
    return {kind: "".join(texts) for kind, texts in joined.items()}


def parse_all(protocol: WireProtocol, pieces: list[bytes]) -> list:
    """Events from a parser fed `pieces`; only ProtocolViolation may escape."""
    parser = protocol.new_parser()
    events = []
    for piece in pieces:
        events += parser.feed(piece)
    return events + parser.close()


def assert_robust(protocol: WireProtocol, pieces: list[bytes]) -> None:
    """Arbitrary input: the parser raises nothing but ProtocolViolation, replay nothing at all."""
    with contextlib.suppress(ProtocolViolation):
        parse_all(protocol, pieces)
    result = replay_stamped(protocol, pieces)
    assert not (result.error_message or "").startswith("unparseable stream"), result.error_message


# ------------------------------------------------------------- event stream
def eventstream_frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One `application/vnd.amazon.eventstream` frame with string headers."""
    encoded = b"".join(
        bytes([len(name)]) + name.encode() + b"\x07" + struct.pack("!H", len(value.encode())) + value.encode()
        for name, value in headers.items()
    )
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack("!II", total, len(encoded))
    prelude += struct.pack("!I", zlib.crc32(prelude))
    message = prelude + encoded + payload
    return message + struct.pack("!I", zlib.crc32(message))


def bedrock_event(event_type: str, payload: dict) -> bytes:
    headers = {":event-type": event_type, ":content-type": "application/json", ":message-type": "event"}
    return eventstream_frame(headers, json.dumps(payload).encode())


def bedrock_exception(exception_type: str, message: str) -> bytes:
    headers = {":exception-type": exception_type, ":content-type": "application/json", ":message-type": "exception"}
    return eventstream_frame(headers, json.dumps({"message": message}).encode())


# ------------------------------------------------------------- hypothesis
def json_values(vocabulary: list[str]):
    """JSON objects three levels deep whose keys and strings come mostly from a
    protocol's own words, so they reach into a parser with the wrong types."""
    from hypothesis import strategies as st

    words = st.sampled_from(vocabulary)
    scalars = st.one_of(
        words, st.none(), st.booleans(), st.integers(-3, 10**12), st.floats(-1e3, 1e3), st.text(max_size=4)
    )
    level1 = scalars | st.dictionaries(words, scalars, max_size=3) | st.lists(scalars, max_size=2)
    level2 = level1 | st.dictionaries(words, level1, max_size=3) | st.lists(level1, max_size=2)
    return st.dictionaries(words, level2, max_size=4) | st.lists(level1, max_size=2) | scalars


def cut(raw: bytes, points: list[int]) -> list[bytes]:
    """`raw` split at the given offsets (taken modulo its length)."""
    if not raw:
        return [raw]
    offsets = sorted({p % len(raw) for p in points} - {0})
    return [raw[a:b] for a, b in zip([0, *offsets], [*offsets, len(raw)], strict=True)]
