"""`firsttoken` as a user runs it, in a process of its own, with nothing in its environment but PATH and
the database: a command that needs more (a provider's key) must say so, not find it by accident."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def firsttoken_cli(cwd: Path, database_url: str, *args: str, timeout_s: float = 300) -> subprocess.CompletedProcess:
    env = {"FIRSTTOKEN_DATABASE_URL": database_url, "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "monitor", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout_s
    )
