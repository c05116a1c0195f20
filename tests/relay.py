"""A TCP relay on loopback that can add latency to one network path (a vantage point's own link).

`monitor.simulator.relay.PathRelay` on a thread of its own, for tests that run synchronously:
`delay_s` is the added latency each way (so `0.2` adds 0.4 s to every request), changed by
the test while the relay runs. Used by the vantage-point end-to-end test: one agent reaches
the simulator through it, the other directly.
"""

from __future__ import annotations

import asyncio
import threading

from monitor.simulator.relay import PathRelay


class DelayRelay:
    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self.delay_s = 0.0  # changed by the test while it runs
        self._relay = PathRelay(upstream_host, upstream_port, lambda _now_s: self.delay_s * 1000.0)
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def port(self) -> int:
        return self._relay.port

    @property
    def url(self) -> str:
        return self._relay.url

    def __enter__(self) -> DelayRelay:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("relay did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._relay.start())
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self._relay.close())
