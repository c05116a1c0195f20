"""Who holds the leader lease (election.py), and whether that process is gone.

A holder is `agent/host/pid/random`: unique per process even for one agent name, readable in
/healthz and the logs, and enough for a SQLite lease (lease_sqlite.py), whose processes all run on
the file's host, to tell a holder that died from one that is only slow.
"""

from __future__ import annotations

import os
import socket
import uuid


def instance_name(agent: str) -> str:
    """This process's holder name (see the module docstring)."""
    return f"{agent}/{socket.gethostname()}/{os.getpid()}/{uuid.uuid4().hex[:8]}"


def died_on_this_host(holder: str) -> bool:
    """Is `holder` (an `instance_name`) a process of this host that no longer runs? False whenever it
    cannot be sure: another host, a name of another shape, a pid that is alive (or reused: then the
    lease runs out as usual) or that this process may not signal."""
    parts = holder.rsplit("/", 3)
    if len(parts) != 4 or parts[1] != socket.gethostname() or not parts[2].isdigit():
        return False
    pid = int(parts[2])
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return True
    except OSError:
        pass  # it exists, under another user
    return False
