import math

import pytest

from monitor.units import format_duration, parse_duration, parse_percent, parse_size


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("5m", 300),
        ("2h", 7200),
        ("1d", 86400),
        ("30d", 30 * 86400),
        ("400d", 400 * 86400),
        ("500ms", 0.5),
        ("1h30m", 5400),
        ("1h 30m", 5400),
        ("1d2h3m4s5ms", 86400 + 7200 + 180 + 4 + 0.005),
        ("1.5h", 5400),
        ("2w", 14 * 86400),
        (" 5m ", 300),
        ("90", 90),
        ("0.25", 0.25),
        (90, 90),
        (2.5, 2.5),
        (0, 0),
        ("0s", 0),
    ],
)
def test_parse_duration(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "5x",
        "m",
        "-5m",
        "5m-",
        "1h30",
        "5m5m",
        "1e3",
        "ms",
        "5 minutes",
        "1h,30m",
        True,
        False,
        None,
        [],
        {},
        "nan",
        "inf",
    ],
)
def test_parse_duration_rejects(bad):
    with pytest.raises(ValueError):
        parse_duration(bad)


@pytest.mark.parametrize("bad", [-1, -0.5, math.inf, -math.inf, math.nan, 10**400, "9" * 400 + "d"])
def test_parse_duration_rejects_negative_and_huge(bad):
    with pytest.raises(ValueError):
        parse_duration(bad)


def test_parse_duration_message_never_contains_the_value():
    with pytest.raises(ValueError) as exc:
        parse_duration("sk-secret-value")
    assert "sk-secret" not in str(exc.value)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (0.5, "500ms"), (1, "1s"), (60, "1m"), (120, "2m"), (5400, "1h30m"), (86400, "1d"),
     (30 * 86400, "30d"), (90.25, "1m30s250ms")],
)  # fmt: skip
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


@pytest.mark.parametrize("seconds", [0.5, 1, 59, 61, 3599, 5400, 86400 * 3 + 1, 1234.567])
def test_format_duration_round_trips(seconds):
    assert parse_duration(format_duration(seconds)) == pytest.approx(seconds, abs=0.001)


@pytest.mark.parametrize(
    ("value", "fraction"),
    [("50%", 0.5), ("20%", 0.2), ("0%", 0.0), ("100%", 1.0), ("12.5%", 0.125), (" 5 % ", 0.05), (0.2, 0.2), (1, 1.0),
     (0, 0.0), ("0.3", 0.3)],
)  # fmt: skip
def test_parse_percent(value, fraction):
    assert parse_percent(value) == pytest.approx(fraction)


def test_parse_percent_above_one_needs_a_larger_maximum():
    with pytest.raises(ValueError):
        parse_percent("150%")
    assert parse_percent("150%", max_fraction=10) == pytest.approx(1.5)


@pytest.mark.parametrize("bad", ["-5%", "101%", "%", "abc", "50", "five%", True, None, [], 20, 1.5, -0.1, math.nan])
def test_parse_percent_rejects(bad):
    with pytest.raises(ValueError):
        parse_percent(bad)


def test_bare_number_above_one_suggests_a_percentage():
    with pytest.raises(ValueError, match="write 20% for a percentage"):
        parse_percent(20)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("65536", 65536), ("64K", 65536), ("64KiB", 65536), ("512M", 512 << 20), ("2G", 2 << 30), ("1.5M", 1572864)],
)
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "0", "-1", "x", "5P", "1e9", "12 apples"])
def test_parse_size_errors(text):
    with pytest.raises(ValueError):
        parse_size(text)
