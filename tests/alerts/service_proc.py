"""Start and stop the service in a subprocess for the end-to-end tests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class ServiceProcess:
    def __init__(self, config_path: Path, workdir: Path, tuning: dict | None = None, env: dict | None = None) -> None:
        self.config_path = config_path
        self.workdir = workdir
        self.tuning = tuning or {}
        self.env = env or {}
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
        argv = [sys.executable, str(Path(__file__).with_name("service_main.py")), "--config", str(self.config_path)]
        argv += ["--spool-dir", str(self.workdir / "spool"), "--tuning", json.dumps(self.tuning)]
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
