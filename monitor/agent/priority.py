"""With probe workers, the agent's own process yields the CPU to them.

In worker mode every timestamp a sample carries is taken in a worker; the
agent's process writes samples, renders /metrics, evaluates alerts and
recomputes rollups, none of which minds waiting a few milliseconds. On two
cores those jobs come in bursts (a rollup of the current hour is ~0.5 s of
CPU here and as much again in PostgreSQL; a scrape of 5,000 targets renders
76 MB), and while one runs, a worker woken by a first byte could wait for a
core: in the 5,000-target soak the probes slower than 5 ms came in clusters
at exactly those moments. At a lower priority (nice +5: about a third of a
normal process's share when both want a core) the kernel runs a woken worker
first, and the agent's work still gets its share.

Linux keeps a nice value per thread, so every thread the process has is
lowered, and threads started later inherit it from the thread that starts
them. The workers are started first and keep the normal priority.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys

log = logging.getLogger(__name__)

YIELD_NICE = 5


def yield_to_probe_workers(nice: int = YIELD_NICE) -> int:
    """Lower this process's (every thread's) CPU priority by `nice`; the threads lowered."""
    lowered = 0
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            for tid in map(int, os.listdir("/proc/self/task")):
                with contextlib.suppress(OSError):  # a thread may end meanwhile
                    os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))
                    lowered += 1
    else:
        with contextlib.suppress(OSError):
            os.nice(nice)  # process-wide elsewhere
            lowered = 1
    log.info("agent process at nice +%d beside its probe workers (%d threads)", nice, lowered)
    return lowered
