"""A network path on loopback: a TCP relay that adds latency in front of a server (the simulator).

A vantage point further away (DESIGN §11) reaches the same servers over a longer path. Each
chunk is delivered `one_way_ms(now)` after it arrived, in order, in both directions, so the path
is latency (a long or congested link), not a throughput cap: a request's response headers come
one round trip (2 × one way) later than direct, and every streamed token after them as late.
The delay is read as each chunk arrives (`now` in epoch seconds), so a path that changes over
time — the demo's far vantage point congesting for a while — changes what follows.

Real sockets both ways. The kernel completes the TCP handshake with the relay at once, so a
probe's connect time stays a loopback one; the path shows in the time to headers and to the
first token, which is where attribution's network part looks for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable


def no_delay(_now_s: float) -> float:
    return 0.0


class PathRelay:
    """`await start()` on the running loop, `await close()` on the same one."""

    def __init__(self, upstream_host: str, upstream_port: int, one_way_ms: Callable[[float], float] = no_delay) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.one_way_ms = one_way_ms
        self.host = "127.0.0.1"
        self.port = 0
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task] = set()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        self._server = await asyncio.start_server(self._handle, host, port)
        self.host, self.port = host, self._server.sockets[0].getsockname()[1]
        return self.port

    async def close(self) -> None:
        """Stop listening and cut the connections still open (their peers see a reset or EOF)."""
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._connections.add(task)
        up_writer = None
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
            await asyncio.gather(self._pump(reader, up_writer), self._pump(up_reader, writer))
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            for w in (writer, up_writer):
                if w is not None:
                    with contextlib.suppress(Exception):
                        w.close()
            self._connections.discard(task)

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Copy one direction; each chunk leaves `one_way_ms` after it came in, never before the one ahead."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due, data = await queue.get()
                if not data:
                    break
                wait_s = due - loop.time()
                if wait_s > 0:
                    await asyncio.sleep(wait_s)
                writer.write(data)
                await writer.drain()

        sender = asyncio.ensure_future(deliver())
        try:
            while data := await reader.read(65536):
                queue.put_nowait((loop.time() + self.one_way_ms(time.time()) / 1000.0, data))
        except (ConnectionError, OSError):
            pass
        except asyncio.CancelledError:  # close(): what is still in flight is dropped, not waited for
            sender.cancel()
            raise
        queue.put_nowait((loop.time(), b""))  # the peer closed: pass that on once what came before is out
        with contextlib.suppress(Exception):
            await sender
        with contextlib.suppress(Exception):
            writer.close()
