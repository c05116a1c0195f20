"""demo-far, live: a second `firsttoken run` on the demo's config and database, over a longer path.

The backfill plays demo-far in simulated time (vantage.py). Once the demo goes
live the same vantage point is a real agent: `firsttoken run` in a child
process with FIRSTTOKEN_AGENT=demo-far, reading the same config file, whose
URLs for the regions it probes come from FAR_PATH_ENV (demo_config.py): here a
`PathRelay` in front of the simulator that plays the vantage's `path_at` on the
wire, half of it each way, so its samples' time to headers and TTFT carry the
path as the history's do.

It is started once the demo's own agent leads (the lease row elects one leader
per database, SQLite included), so the demo's quick alert rounds are the ones
that run and demo-far only probes; it is stopped before that agent, so the
lease is never given up while demo-far could take it. Its log goes to a file
beside the config. Started in its own session, the terminal's Ctrl-C reaches
the demo only, which stops it; `child_env` ends it with the demo if the demo is
killed outright.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from monitor import envvars
from monitor.childproc import child_env
from monitor.demo.demo_config import FAR_PATH_ENV
from monitor.demo.vantage import Vantage
from monitor.simulator.relay import PathRelay

FAR_LOG = "demo-far.log"  # beside the demo's config
STOP_TIMEOUT_S = 8.0  # its probes in flight get the service's 5 s grace, then the flush


class FarAgent:
    def __init__(self, vantage: Vantage, config_path: str, simulator_port: int) -> None:
        self.vantage = vantage
        self.config_path = config_path
        self.log_path = Path(config_path).parent / FAR_LOG
        self.relay = PathRelay("127.0.0.1", simulator_port, self.one_way_ms)
        self.process: subprocess.Popen | None = None
        self._spool: str | None = None
        self._stopping: asyncio.Future | None = None

    def one_way_ms(self, now_s: float) -> float:
        """The vantage's path at `now_s`, half on the way there and half on the way back."""
        return self.vantage.path_at(now_s) / 2.0

    async def start(self) -> None:
        await self.relay.start()
        self._spool = tempfile.mkdtemp(prefix="firsttoken-demo-far-spool-")
        env = child_env({**os.environ, envvars.AGENT: self.vantage.agent, FAR_PATH_ENV: self.relay.url})
        command = [
            sys.executable,
            "-m",
            "monitor",
            "run",
            "--config",
            self.config_path,
            "--listen",
            "127.0.0.1:0",  # its /metrics and /healthz on any free port: the log says which
            "--spool-dir",
            self._spool,
            "--probe-workers",
            "1",  # a handful of targets: no worker processes
        ]
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                command, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )

    def exited(self) -> int | None:
        """Its exit code if it has stopped, else None."""
        return None if self.process is None else self.process.poll()

    async def stop(self) -> int | None:
        """SIGTERM (it lets its probes in flight finish and flushes its samples), then the relay.

        Once: the demo calls it on Ctrl-C and again as it unwinds, whatever ended it."""
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._stop())
        return await asyncio.shield(self._stopping)

    async def _stop(self) -> int | None:
        code = None
        if self.process is not None:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGTERM)
            try:
                code = await asyncio.to_thread(self.process.wait, STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                code = await asyncio.to_thread(self.process.wait)
        await self.relay.close()
        if self._spool is not None:
            shutil.rmtree(self._spool, ignore_errors=True)
        return code
