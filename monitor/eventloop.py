"""Run a coroutine on the fastest event loop available.

uvloop roughly halves the per-read cost of the event loop, which is most of
what a probe adds on top of the network (see benchmarks/accuracy.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def loop_factory():
    try:
        import uvloop
    except ImportError:  # not on Windows; the standard loop works, only slower
        return None
    return uvloop.new_event_loop


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    factory = loop_factory()
    if factory is None:
        return asyncio.run(coro)
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(coro)
