"""Pause Python's cyclic garbage collector around bulk reads, from any number of threads.

A dashboard query turns 10-40 thousand result rows into tuples before numpy
takes them over. Every 700 new tuples start a collection, and now and then one
of them is a full collection that walks the whole heap (Streamlit, pandas and
Plotly hold about a million objects): measured on the 7-day timeline, the same
query took 45 ms or 105 ms depending on whether a full collection fell inside
it. The rows hold no reference cycles and are freed by reference counting when
the loader returns, so nothing is gained by collecting during the read.

The pause is counted, so overlapping loaders (Streamlit runs sessions on
threads) re-enable collection only when the last of them ends, and never
re-enable it if it was off before the first began.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
