"""A plain-text progress bar on stderr: redrawn in place on a terminal, a line per step otherwise.

Redraws are rate-limited, so a fast loop spends its time working, not printing.
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import TextIO

WIDTH = 30
REDRAW_S = 0.1
LOG_EVERY_PERCENT = 10  # without a terminal (CI logs, pipes): one line per 10 %


class ProgressBar:
    def __init__(self, label: str, total: int, stream: TextIO | None = None) -> None:
        self.label = label
        self.total = max(1, total)
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = time.monotonic()
        self._drawn_at = 0.0
        self._logged_percent = -1
        self._open = False  # a redrawn line is on screen, without its newline yet

    def update(self, done: int, note: str = "") -> None:
        percent = min(100, done * 100 // self.total)
        if self.tty:
            now = time.monotonic()
            if now - self._drawn_at < REDRAW_S and done < self.total:
                return
            self._drawn_at = now
            # A line wider than the terminal wraps, and `\r` then redraws only its last row.
            width = shutil.get_terminal_size().columns - 1
            self.stream.write("\r" + self._line(done, percent, note)[:width] + "\x1b[K")
            self._open = True
        elif percent // LOG_EVERY_PERCENT > self._logged_percent // LOG_EVERY_PERCENT or done >= self.total:
            if percent == self._logged_percent:
                return
            self._logged_percent = percent
            self.stream.write(self._line(done, percent, note) + "\n")
        self.stream.flush()

    def message(self, text: str) -> None:
        """Print a line above the bar (an alert during the backfill) without mangling it."""
        if self._open:
            self.stream.write("\r\x1b[K")
        self.stream.write(text + "\n")
        self._drawn_at = 0.0  # redraw the bar at the next update
        self.stream.flush()

    def finish(self, note: str = "") -> None:
        self.update(self.total, note)
        self.close()

    def close(self) -> None:
        """End the bar's line where it stands (an interrupted run)."""
        if self._open:
            self.stream.write("\n")
            self._open = False
        self.stream.flush()

    def _line(self, done: int, percent: int, note: str) -> str:
        filled = WIDTH * percent // 100
        bar = "#" * filled + "." * (WIDTH - filled)
        elapsed = time.monotonic() - self.started
        text = f"{self.label} [{bar}] {percent:3d}%  {done}/{self.total}  {elapsed:4.1f}s"
        return f"{text}  {note}" if note else text
