"""Child processes that cannot outlive their parent, however the parent ends.

A parent stopped by SIGKILL (or a test runner that exits without running its
finalizers) runs no cleanup, so its children would run on, holding ports and
database connections. On Linux the kernel can end them instead:

- a process that starts children passes `child_env()` to them (their parent's pid);
- the child calls `honour_parent()` first thing: it asks for SIGKILL when that parent
  goes, and exits at once if it is already gone (it was re-parented before it asked);
- `python -m monitor.childproc MODULE ARGS…` does that, then runs MODULE as
  `python -m MODULE ARGS…` would: for a child that is not ours to edit (Streamlit).

Elsewhere these are no-ops; the children's own pipes and deadlines are the fallback.
"""

from __future__ import annotations

import contextlib
import os
import runpy
import signal
import sys
from collections.abc import Mapping

from monitor import envvars

PARENT_ENV = envvars.PARENT_PID
PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Linux: the kernel sends this process SIGKILL when the thread that started it ends."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` (default: this process's) for a child that should end with this process."""
    return {**(os.environ if env is None else env), PARENT_ENV: str(os.getpid())}


def honour_parent() -> None:
    """If started with `child_env`: end with that parent. The variable is not passed further down."""
    parent = os.environ.pop(PARENT_ENV, "")
    if not parent.isdigit():
        return
    die_with_parent()
    if os.getppid() != int(parent):  # the parent went before the kernel was asked to tell
        os._exit(1)


def main(argv: list[str]) -> None:
    honour_parent()
    if not argv:
        raise SystemExit("usage: python -m monitor.childproc MODULE [ARGS...]")
    sys.argv = argv
    runpy.run_module(argv[0], run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
