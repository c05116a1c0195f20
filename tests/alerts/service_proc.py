"""Start and stop `firsttoken run` in a subprocess for the end-to-end tests.

The service is the real command; only the config's `alerting:` timings are
shortened (evaluate every second, a short grouping hold, fast retries), so a
test can watch a page go out in seconds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
FAST_ALERTING = {"evaluate_every": "1s", "deliver_every": "1s", "settle": "10ms", "group_wait": "3s",
                 "retry_after": "500ms", "retry_max": "2s"}  # fmt: skip


class ServiceProcess:
    def __init__(
        self,
        config_path: Path,
        workdir: Path,
        alerting: dict | None = None,
        env: dict | None = None,
        listen: str = "127.0.0.1:0",  # a fixed port when the config must name it (`public_url`)
    ) -> None:
        self.config_path = config_path
        self.workdir = workdir
        self.alerting = {**FAST_ALERTING, **(alerting or {})}
        self.env = env or {}
        self.listen = listen
        self.process: subprocess.Popen | None = None
        self.log_path = workdir / "service.log"
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        env = dict(os.environ, **self.env)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        env.pop("FIRSTTOKEN_DATABASE_URL", None)  # the config names the database
        log = open(self.log_path, "a")  # noqa: SIM115  (the child owns it)
        log.write(f"--- start {self.starts}\n")
        log.flush()
        # The test's config as it is now, plus the fast timings, beside it (relative paths still resolve).
        spec = yaml.safe_load(self.config_path.read_text())
        config = self.config_path.with_name(f"{self.config_path.stem}.service.yaml")
        config.write_text(yaml.safe_dump({**spec, "alerting": self.alerting}))
        argv = [sys.executable, "-m", "monitor", "run", "--config", str(config), "--listen", self.listen]
        argv += ["--spool-dir", str(self.workdir / "spool")]
        self.process = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        log.close()

    def stop(self, timeout_s: float = 20.0) -> int:
        """SIGTERM, as an orchestrator would; the service finishes in-flight work and exits."""
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else 0
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"service did not stop within {timeout_s}s:\n{self.log()}") from None

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log(self) -> str:
        return self.log_path.read_text() if self.log_path.exists() else ""

    def __enter__(self) -> ServiceProcess:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
