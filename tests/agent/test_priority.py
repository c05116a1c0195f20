"""The agent's process yields the CPU to its probe workers (monitor.agent.priority)."""

import os
import subprocess
import sys
import textwrap
import threading

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice is Linux's")

# In a child: the test process's own threads must keep their priority.
SCRIPT = textwrap.dedent(
    """
    import os, sys, threading, time, json
    from monitor.agent.priority import yield_to_probe_workers

    started = threading.Event()
    def before():
        started.set(); time.sleep(2)
    threading.Thread(target=before, daemon=True).start()
    started.wait()
    worker = __import__("subprocess").Popen([sys.executable, "-c", "import time; time.sleep(2)"])  # started first
    lowered = yield_to_probe_workers(5)
    later = {}
    def after():
        later["nice"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    t = threading.Thread(target=after); t.start(); t.join()
    tids = [int(t) for t in os.listdir("/proc/self/task")]
    print(json.dumps({
        "lowered": lowered,
        "threads": sorted(os.getpriority(os.PRIO_PROCESS, tid) for tid in tids),
        "later": later["nice"],
        "worker": os.getpriority(os.PRIO_PROCESS, worker.pid),
        "base": int(sys.argv[1]),
    }))
    worker.kill()
    """
)


def test_every_thread_and_later_ones_are_lowered_but_not_the_workers_started_before():
    import json

    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(base)], capture_output=True, text=True, check=True, timeout=30
    ).stdout
    seen = json.loads(out)
    assert seen["lowered"] >= 2  # the main thread and the one already running
    assert set(seen["threads"]) == {min(19, base + 5)}
    assert seen["later"] == min(19, base + 5)  # inherited by threads started afterwards
    assert seen["worker"] == base
