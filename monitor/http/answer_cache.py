"""A short-lived cache of GET /routes answers, per query string.

A fleet of gateways polling every few seconds would otherwise each pay for a ranking (hundreds
of milliseconds over a few hundred targets). Within `ttl_s` (half the probe cadence, at most
5 s: nothing new can have been measured sooner) they share one; errors are never cached.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

MAX_ENTRIES = 64
MAX_TTL_S = 5.0


def ttl_for(max_age_s: float) -> float:
    return min(MAX_TTL_S, max_age_s / 2)


class AnswerCache:
    def __init__(
        self,
        handle: Callable[[str], tuple[int, bytes]],
        ttl_s: Callable[[], float],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._handle = handle
        self._ttl_s = ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._answers: OrderedDict[str, tuple[float, tuple[int, bytes]]] = OrderedDict()
        self.misses = 0

    def __call__(self, query_string: str) -> tuple[int, bytes]:
        now = self._clock()
        with self._lock:
            hit = self._answers.get(query_string)
            if hit is not None and now - hit[0] < self._ttl_s():
                return hit[1]
        answer = self._handle(query_string)
        self.misses += 1
        if answer[0] == 200:
            with self._lock:
                self._answers[query_string] = (now, answer)
                self._answers.move_to_end(query_string)
                while len(self._answers) > MAX_ENTRIES:
                    self._answers.popitem(last=False)
        return answer
