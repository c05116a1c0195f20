"""A TCP relay on loopback that can add latency to one network path (a vantage point's own link).

Real sockets both ways; each chunk is delivered `delay_s` after it arrived, in
order, so a delay is latency (as a slow peering link), not a throughput cap.
Used by the vantage-point end-to-end test: one agent reaches the simulator
through it, the other directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time


class DelayRelay:
    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.delay_s = 0.0  # changed by the test while it runs
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._server: asyncio.base_events.Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

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
        self._server = self._loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        self._server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.close()
            return
        await asyncio.gather(self._pump(reader, up_writer), self._pump(up_reader, writer), return_exceptions=True)

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            while True:
                arrived, data = await queue.get()
                if not data:
                    break
                wait_s = arrived + self.delay_s - time.monotonic()
                if wait_s > 0:
                    await asyncio.sleep(wait_s)
                writer.write(data)
                await writer.drain()

        sender = asyncio.ensure_future(deliver())
        try:
            while data := await reader.read(65536):
                queue.put_nowait((time.monotonic(), data))
        except (ConnectionError, OSError):
            pass
        queue.put_nowait((time.monotonic(), b""))
        with contextlib.suppress(Exception):
            await sender
        with contextlib.suppress(Exception):
            writer.close()
