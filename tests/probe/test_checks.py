"""The pure answer checks and the answer fingerprint."""

from __future__ import annotations

from monitor.config import Expect, ToolExpect
from monitor.probe.checks import CHECK_ORDER, evaluate, parse_json
from monitor.probe.fingerprint import answer_fingerprint
from monitor.probe.measure import Answer, StreamMeasurement, ToolCall
from monitor.protocols.base import TokenDelta, TokenKind, tool_delta


def answer(text: str, *calls: ToolCall, chars: int | None = None) -> Answer:
    return Answer(text, len(text) if chars is None else chars, calls)


def test_first_failed_check_in_order_and_reasons_do_not_quote_the_answer() -> None:
    expect = Expect(contains=("Paris",), regex=r"\d{4}", max_chars=5, min_tokens=3)
    failure = evaluate(expect, answer("secret-ish words from the model, about Paris"), 10)
    assert (failure.check, failure.reason) == ("regex", 'answer does not match "\\\\d{4}"')
    assert CHECK_ORDER.index("regex") < CHECK_ORDER.index("max_chars")
    schema_fail = evaluate(
        Expect(json_schema={"type": "object", "properties": {"n": {"type": "integer"}}}),
        answer('{"n": "confidential value"}'),
        5,
    )
    assert schema_fail.check == "json_schema" and "confidential" not in schema_fail.reason
    assert schema_fail.reason == "answer: json_schema mismatch at n (rule 'type')"


def test_json_in_a_code_fence_is_json() -> None:
    assert parse_json('```json\n{"a": 1}\n```') == ({"a": 1}, None)
    assert parse_json("{'a': 1}")[1].startswith("Expecting property name")


def test_min_tokens_counts_the_answer_not_the_reasoning() -> None:
    assert evaluate(Expect(min_tokens=10), answer("x"), 50, reasoning_tokens=45).check == "min_tokens"
    assert evaluate(Expect(min_tokens=5), answer("x"), 50, reasoning_tokens=45) is None


def test_an_answer_over_the_kept_text_says_so() -> None:
    failure = evaluate(Expect(contains=("end",)), answer("abc", chars=100_000), 10)
    assert failure.reason.endswith("(checked the first 3 of 100000 chars)")
    assert evaluate(Expect(max_chars=99_999), answer("abc", chars=100_000), 10).check == "max_chars"


def test_tool_arguments_must_parse_as_an_object() -> None:
    bad = evaluate(Expect(tool=ToolExpect("f")), answer("", ToolCall("f", '{"a": ')), 5)
    assert bad.check == "tool" and "not JSON" in bad.reason
    # of two calls to the function, one that validates is enough
    two = answer("", ToolCall("f", "[1]"), ToolCall("f", '{"a": 1}'))
    assert evaluate(Expect(tool=ToolExpect("f", {"required": ["a"]})), two, 5) is None


def test_measurement_keeps_answer_and_calls_bounded() -> None:
    m = StreamMeasurement(0)
    m.add(1, [TokenDelta(TokenKind.REASONING, "thinking "), TokenDelta(TokenKind.ANSWER, "Hello")])
    m.add(2, [tool_delta(1, "g", '{"b"'), tool_delta(0, "f", ""), tool_delta(1, "", ": 2}")])
    m.add(3, [TokenDelta(TokenKind.ANSWER, "x" * 200_000)])
    got = m.answer()
    assert got.text.startswith("Hello") and len(got.text) == 64_000 and got.chars == 200_005
    assert got.tool_calls == (ToolCall("f", ""), ToolCall("g", '{"b": 2}'))
    assert m.metrics().ttft_ms == 1e-6  # a tool token is a token, as before


def test_fingerprint_normalises_case_whitespace_and_the_nonce() -> None:
    a = answer_fingerprint(answer("[1a2b3c4d] The  Capital of France\nis Paris."))
    b = answer_fingerprint(answer("the capital of france is paris."))
    assert a == b and len(a) == 16
    assert answer_fingerprint(answer("Lyon is not the capital.")) != a
    long_a = answer_fingerprint(answer(" ".join(["w"] * 24) + " tail one"))
    long_b = answer_fingerprint(answer(" ".join(["w"] * 24) + " tail two"))
    assert long_a == long_b  # only the opening counts (the module says why)
    assert answer_fingerprint(answer("")) is None
    assert answer_fingerprint(answer("", ToolCall("f", '{"b":1, "a":2}'))) == answer_fingerprint(
        answer("", ToolCall("f", '{"a": 2, "b": 1}'))
    )
