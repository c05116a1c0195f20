"""The backfill's progress bar: a line per 10 % in logs, a redrawn line on a terminal, messages above it."""

from __future__ import annotations

import io

from monitor.demo.progress import ProgressBar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_without_a_terminal_one_line_per_ten_percent():
    out = io.StringIO()
    bar = ProgressBar("backfilling", 200, out)
    for done in range(1, 201):
        bar.update(done, "alerts: 0 fired")
    bar.finish("alerts: 0 fired")
    lines = out.getvalue().splitlines()
    assert [line.split("]")[1].split()[0] for line in lines] == [f"{p}%" for p in range(0, 101, 10)]
    assert "\r" not in out.getvalue() and lines[-1].startswith("backfilling [" + "#" * 30 + "] 100%  200/200")


def test_on_a_terminal_redrawn_in_place_and_messages_go_above():
    out = Terminal()
    bar = ProgressBar("backfilling", 10, out)
    bar.update(5)
    bar.message("  2.0 h ago  ALERT FIRING #1")
    bar.update(10)
    bar.finish()
    text = out.getvalue()
    assert text.count("\n") == 2  # the message's line and the finished bar's
    assert "\r\x1b[K  2.0 h ago  ALERT FIRING #1\n" in text
    assert text.endswith("] 100%  10/10   0.0s\x1b[K\n")
