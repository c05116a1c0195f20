"""Polling a condition in the end-to-end tests: one helper instead of a copy per module."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(predicate: Callable[[], T], timeout_s: float = 30.0, interval_s: float = 0.2) -> T:
    """The predicate's first truthy value within `timeout_s`, else its value at the deadline."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval_s)
    return predicate()
