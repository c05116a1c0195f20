"""Start a simulator for a test or a benchmark: in a subprocess, or in a thread.

    with SimulatorProcess() as sim:
        httpx.post(sim.url("/v1/chat/completions"), json=…)
        sim.set_model("m", ttft_ms=400)
        sim.truth(request_id)["first_token_ns"]

Prefer `SimulatorProcess` for anything timed: a server thread shares the
test's GIL and its timing would suffer from whatever the test does.
`SimulatorThread` starts in milliseconds and suits functional tests.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx

from monitor.childproc import child_env
from monitor.simulator.catalogue import Catalogue, load_scenario
from monitor.simulator.server import Simulator
from monitor.simulator.truth import TruthStore

T = TypeVar("T")
_READY = re.compile(r"listening on (http://\S+):(\d+)")


class _Control:
    """The control API calls both variants share, over HTTP (one kept-alive client)."""

    base_url: str
    _http: httpx.Client | None = None

    def url(self, path: str) -> str:
        return self.base_url + "/" + path.lstrip("/")

    @property
    def http(self) -> httpx.Client:
        if self._http is None:
            self._http = httpx.Client(base_url=self.base_url, timeout=10)
        return self._http

    def _close_http(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None

    def truth(self, request_id: str) -> dict[str, Any] | None:
        """The truth record of a request, or None if the simulator never saw it."""
        response = self.http.get(f"/_sim/truth/{request_id}")
        if response.status_code == 404:
            return None
        response.raise_for_status()
        return response.json()

    def set_model(self, name: str, **behaviour: Any) -> dict[str, Any]:
        """Upsert a model's behaviour fields (`ttft_ms=400`, `fault="reset"` …)."""
        response = self.http.put(f"/_sim/models/{name}", json=behaviour)
        response.raise_for_status()
        return response.json()["behaviour"]

    def models(self) -> dict[str, Any]:
        return self.http.get("/_sim/models").json()

    def health(self) -> dict[str, Any]:
        return self.http.get("/_sim/health").json()


class SimulatorProcess(_Control):
    """`python -m monitor.simulator --port 0` in a subprocess, stopped on exit."""

    def __init__(
        self,
        *,
        scenario: str | os.PathLike[str] | None = None,
        truth_log: str | os.PathLike[str] | None = None,
        api_key: str | None = None,
        seed: int | None = None,
        host: str = "127.0.0.1",
        extra_args: list[str] | None = None,
        startup_timeout_s: float = 15.0,
    ) -> None:
        self.args = [sys.executable, "-m", "monitor.simulator", "--host", host, "--port", "0"]
        for flag, value in (
            ("--scenario", scenario),
            ("--truth-log", truth_log),
            ("--api-key", api_key),
            ("--seed", seed),
        ):
            if value is not None:
                self.args += [flag, str(value)]
        self.args += extra_args or []
        self.startup_timeout_s = startup_timeout_s
        self.process: subprocess.Popen[str] | None = None
        self.base_url = ""
        self.port = 0

    def __enter__(self) -> SimulatorProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._stderr = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115  (closed in stop)
        # The repository root on the path, so the child imports this very tree.
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
        self.process = subprocess.Popen(
            self.args, stdout=subprocess.PIPE, stderr=self._stderr, text=True, env=child_env(env)
        )
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(self.process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        reader.join(self.startup_timeout_s)
        match = _READY.search(line[0]) if line else None
        if match is None:
            self.stop()
            raise RuntimeError(f"simulator did not start: {line[0] if line else 'no output'!r} {self._stderr_text()}")
        self.base_url = f"{match.group(1)}:{match.group(2)}"
        self.port = int(match.group(2))

    def _stderr_text(self) -> str:
        if self._stderr.closed:
            return ""
        self._stderr.seek(0)
        return self._stderr.read()[-4000:]

    def stop(self) -> None:
        self._close_http()
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process is not None and self.process.stdout is not None:
            self.process.stdout.close()
        if hasattr(self, "_stderr"):
            self._stderr.close()


class SimulatorThread(_Control):
    """A simulator on its own event loop in a daemon thread of this process."""

    def __init__(
        self,
        *,
        scenario: str | os.PathLike[str] | None = None,
        truth_log: str | os.PathLike[str] | None = None,
        api_key: str | None = None,
        seed: int | None = None,
        host: str = "127.0.0.1",
        use_uvloop: bool = True,
    ) -> None:
        catalogue = load_scenario(scenario) if scenario is not None else Catalogue()
        self.simulator = Simulator(catalogue, truth=TruthStore(log_path=truth_log), api_key=api_key, seed=seed)
        self.host = host
        self.use_uvloop = use_uvloop
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.base_url = ""
        self.port = 0

    def __enter__(self) -> SimulatorThread:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _new_loop(self) -> asyncio.AbstractEventLoop:
        if self.use_uvloop:
            try:
                import uvloop
            except ImportError:
                pass
            else:
                return uvloop.new_event_loop()
        return asyncio.new_event_loop()

    def start(self) -> None:
        ready = threading.Event()
        errors: list[BaseException] = []

        def run() -> None:
            loop = self.loop = self._new_loop()
            asyncio.set_event_loop(loop)
            try:
                self.port = loop.run_until_complete(self.simulator.start(self.host, 0))
            except BaseException as exc:
                errors.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self.simulator.stop())
            loop.close()

        self._thread = threading.Thread(target=run, name="simulator", daemon=True)
        self._thread.start()
        ready.wait(15)
        if errors:
            raise errors[0]
        self.base_url = f"http://{self.host}:{self.port}"

    def stop(self) -> None:
        self._close_http()
        if self.loop is not None and self._thread is not None and self._thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10)

    def call(self, fn: Callable[[], T]) -> T:
        """Run `fn` on the simulator's loop and return its result (consistent reads)."""
        assert self.loop is not None
        future = asyncio.run_coroutine_threadsafe(_wrap(fn), self.loop)
        return future.result(10)

    def truth(self, request_id: str) -> dict[str, Any] | None:
        record = self.call(lambda: self.simulator.truth.get(request_id))
        return None if record is None else record.to_dict()

    def set_model(self, name: str, **behaviour: Any) -> dict[str, Any]:
        return self.call(lambda: self.simulator.catalogue.upsert(name, behaviour)).to_dict()


async def _wrap(fn: Callable[[], T]) -> T:
    return fn()


def wait_for(predicate: Callable[[], bool], timeout_s: float = 5.0, interval_s: float = 0.01) -> bool:
    """Poll `predicate` until true or the timeout; its last value."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(interval_s)
    return True
