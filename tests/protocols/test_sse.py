import re
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitor.protocols.base import ProtocolViolation
from monitor.protocols.sse import LineSplitter, SSEDecoder


def split_all(splitter: LineSplitter, pieces: list[bytes]) -> list[str]:
    lines = []
    for piece in pieces:
        lines += splitter.feed(piece)
    return lines + splitter.close()


@pytest.mark.parametrize("sep", [b"\n", b"\r\n", b"\r"])
def test_every_line_ending_splits_the_same(sep):
    body = sep.join([b"data: a", b"", b"data: b", b""])
    assert split_all(LineSplitter(), [body]) == ["data: a", "", "data: b"]


def test_crlf_split_across_reads_is_one_break():
    assert split_all(LineSplitter(), [b"data: a\r", b"\n\r", b"\ndata: b"]) == ["data: a", "", "data: b"]


@given(st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=40))
def test_any_read_boundaries_give_the_same_lines(cuts):
    body = b'event: x\r\ndata: {"a": "\xc3\xa9"}\r\n\r\n: comment\r\ndata: [DONE]\r\n\r\n'
    pieces, pos = [], 0
    for cut in cuts:
        pieces.append(body[pos : pos + cut])
        pos += cut
    pieces.append(body[pos:])
    assert split_all(LineSplitter(), pieces) == split_all(LineSplitter(), [body])


def test_a_utf8_character_split_across_reads_decodes():
    text = "日本語".encode()
    assert split_all(LineSplitter(), [text[:4], text[4:] + b"\n"]) == ["日本語"]


def test_invalid_utf8_is_a_protocol_violation():
    with pytest.raises(ProtocolViolation, match="UTF-8"):
        LineSplitter().feed(b"data: \xff\xfe\n")


def test_an_oversized_line_is_refused_before_it_is_buffered_whole():
    splitter = LineSplitter(max_line_bytes=1024)
    splitter.feed(b"x" * 1000)
    with pytest.raises(ProtocolViolation, match="longer than 1024"):
        splitter.feed(b"x" * 100)


def test_sse_events_comments_and_unterminated_last_event():
    decoder = SSEDecoder()
    events = decoder.feed(b": OPENROUTER PROCESSING\n\nevent: ping\ndata: {}\n\ndata: one\n")
    events += decoder.close()
    assert [(e.event, e.data) for e in events] == [("ping", "{}"), ("", "one")]
    assert decoder.comments == 1


def test_data_lines_without_blank_lines_are_separate_events():
    # llama.cpp builds have been recorded separating events by a single "\n"
    decoder = SSEDecoder()
    events = decoder.feed(b'data: {"a":1}\ndata: {"b":2}\ndata: [DONE]\n') + decoder.close()
    assert [e.data for e in events] == ['{"a":1}', '{"b":2}', "[DONE]"]


def test_field_without_space_after_colon():
    decoder = SSEDecoder()
    assert [e.data for e in decoder.feed(b"data:x\n\n")] == ["x"]


@given(
    st.lists(st.sampled_from([b"a", b"data: x", b"\r", b"\n", b"\r\n", b"\xc3\xa9", b""]), max_size=30),
    st.lists(st.integers(min_value=0, max_value=12), max_size=12),
)
def test_any_body_cut_anywhere_gives_the_lines_of_the_whole(words, cuts):
    body = b"".join(words)
    pieces, pos = [], 0
    for cut in cuts:
        pieces.append(body[pos : pos + cut])
        pos += cut
    pieces.append(body[pos:])
    whole = [line.decode() for line in re.split(rb"\r\n|\r|\n", body)]
    got = split_all(LineSplitter(), pieces)
    # Blank lines at the very end carry nothing (a CR held back for a CRLF may drop one).
    while whole and whole[-1] == "":
        whole.pop()
    while got and got[-1] == "":
        got.pop()
    assert got == whole


def test_a_long_line_costs_linear_time():
    # Regression: every read rescanned (and re-copied) the whole partial line,
    # so a 1 MiB line read 1 KB at a time took seconds of event-loop time.
    splitter = LineSplitter()
    piece = b"x" * 1024
    started = time.perf_counter()
    for _ in range(1023):
        assert splitter.feed(piece) == []
    assert splitter.feed(b"\n") == ["x" * 1024 * 1023]
    assert time.perf_counter() - started < 0.5
