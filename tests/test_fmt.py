"""Numbers for people (monitor.fmt): the spellings the dashboard and notifications share."""

from __future__ import annotations

import math

import pytest

from monitor import fmt


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "—"),
        (math.nan, "—"),
        (0.0, "0.0 ms"),
        (4.24, "4.2 ms"),
        (818.9545, "819 ms"),
        (1234.4, "1,234 ms"),
        (9_999.0, "9,999 ms"),
        (10_000.0, "10.0 s"),
        (12_345.0, "12.3 s"),
        (125_000.0, "125 s"),
        (1_234_000.0, "1,234 s"),
    ],
)
def test_durations_read_in_ms_then_seconds_from_10_s(value, text):
    assert fmt.ms(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, "—"), (0.0, "0%"), (0.0042, "0.42%"), (0.0417, "4.2%"), (0.4, "40%"), (1.0, "100%")],
)
def test_rates_read_as_percentages_with_more_digits_when_small(value, text):
    assert fmt.pct(value) == text


def test_token_speeds_counts_money_and_spans():
    assert fmt.tok_s(8.46) == "8.5 tok/s" and fmt.tok_s(141.6) == "142 tok/s" and fmt.tok_s(1240.0) == "1,240 tok/s"
    assert fmt.count(12345) == "12,345" and fmt.count(None) == "—"
    assert fmt.usd(1234.5) == "$1,234.50" and fmt.usd(0.0031) == "$0.0031"
    assert (
        fmt.span(0.5) == "0.5 s"
        and fmt.span(2) == "2 s"
        and fmt.span(45) == "45 s"
        and fmt.span(12 * 60) == "12 min"
        and fmt.span(2 * 3600 + 5 * 60) == "2 h 05 min"
    )
    assert fmt.span(3 * 86400 + 4 * 3600) == "3 d 4 h"


def test_alert_metrics_read_in_their_units():
    assert fmt.metric("ttft_ms", 1800.0) == "1,800 ms"
    assert fmt.metric("total_ms", 23_500.0) == "23.5 s"
    assert fmt.metric("error_rate", 0.0417) == "4.2%"
    assert fmt.metric("tps", 38.46) == "38 tok/s"
    assert fmt.metric("served_by", None) == "—"  # a change alert's value is text, kept elsewhere
    assert fmt.change(1800.0, 900.0) == "+100%" and fmt.change(1.0, None) == ""


def test_counted_says_one_noun_and_many_nouns():
    # An agent-wide alert whose tail is down to one provider said "towards 1 providers ... 1 targets".
    assert fmt.counted(1, "provider") == "1 provider"
    assert fmt.counted(2, "target") == "2 targets"
    assert fmt.counted(1200, "target") == "1,200 targets"


def test_listed_joins_names_as_a_sentence_does():
    assert fmt.listed([]) == "none" and fmt.listed((), empty="no agent") == "no agent"
    assert fmt.listed(["eu-west"]) == "eu-west"
    assert fmt.listed(("a", "b")) == "a and b"
    assert fmt.listed(["a", "b", "c"]) == "a, b and c"
