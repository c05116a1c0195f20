"""A plain-asyncio network backend for httpcore.

It also stamps arrival: each read records, in the current probe's trace,
when its bytes came off the socket (`data_received`), so the probe's
timestamps do not include the time httpcore and httpx spend passing the
bytes up (DESIGN §1: stamp when the bytes arrive, then parse).

httpcore reaches asyncio through anyio, whose cancel scopes and stream
wrappers cost more per read than parsing the SSE chunk itself. The probe
enforces its own deadlines (httpcore timeouts are always None here), so a
thin asyncio.Protocol is all a connection needs: reads hand out what
arrived, and a full buffer pauses the socket so a runaway stream cannot
grow memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from collections.abc import Iterable
from typing import Any

import httpcore

from monitor.probe.transport.trace import CURRENT_TRACE

MAX_BUFFER_BYTES = 256 * 1024


class _Protocol(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.eof = False
        self.error: Exception | None = None
        self.closed = False
        self.paused_reading = False
        self.last_data_ns = 0  # perf_counter_ns() when the newest buffered bytes came off the socket
        self._waiter: asyncio.Future | None = None
        self._drain: asyncio.Future | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.last_data_ns = time.perf_counter_ns()
        self.buffer += data
        if len(self.buffer) > MAX_BUFFER_BYTES and not self.paused_reading and self.transport is not None:
            self.transport.pause_reading()
            self.paused_reading = True
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.error = exc
        self._wake()
        if self._drain is not None and not self._drain.done():
            self._drain.set_result(None)

    def pause_writing(self) -> None:
        self._drain = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._drain is not None and not self._drain.done():
            self._drain.set_result(None)
        self._drain = None

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def wait_readable(self) -> None:
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    async def drained(self) -> None:
        if self._drain is not None:
            await self._drain


class AsyncioStream(httpcore.AsyncNetworkStream):
    def __init__(self, protocol: _Protocol) -> None:
        self._protocol = protocol
        self._pending = bytearray()

    def _flush(self) -> None:
        if self._pending:
            transport = self._protocol.transport
            if transport is not None and not transport.is_closing():
                transport.write(bytes(self._pending))
            self._pending.clear()

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        p = self._protocol
        self._flush()
        if not p.buffer and not p.eof and not p.closed:
            try:
                async with asyncio.timeout(timeout):
                    await p.wait_readable()
            except TimeoutError:
                raise httpcore.ReadTimeout("read timed out") from None
        if p.buffer:
            trace = CURRENT_TRACE.get()
            if trace is not None:
                trace.read_ns = p.last_data_ns
            data = bytes(p.buffer[:max_bytes])
            del p.buffer[:max_bytes]
            if p.paused_reading and len(p.buffer) < MAX_BUFFER_BYTES // 2 and p.transport is not None:
                p.transport.resume_reading()
                p.paused_reading = False
            return data
        if p.error is not None:
            raise httpcore.ReadError(str(p.error) or type(p.error).__name__)
        return b""  # EOF

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        # httpcore writes the head, the body and an empty end-of-message
        # separately. Sent as they come, each is a syscall and a segment that
        # wakes the server for a partial request; held until the response is
        # read, the whole request leaves in one write.
        p = self._protocol
        if p.closed or p.transport is None or p.transport.is_closing():
            raise httpcore.WriteError(str(p.error) if p.error else "connection closed")
        self._pending += buffer
        if len(self._pending) < MAX_BUFFER_BYTES:
            return
        self._flush()
        try:
            async with asyncio.timeout(timeout):
                await p.drained()
        except TimeoutError:
            raise httpcore.WriteTimeout("write timed out") from None

    async def aclose(self) -> None:
        self._pending.clear()
        if self._protocol.transport is not None:
            self._protocol.transport.close()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> AsyncioStream:
        p = self._protocol
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport = await loop.start_tls(p.transport, p, ssl_context, server_hostname=server_hostname)
        except TimeoutError:
            await self.aclose()
            raise httpcore.ConnectTimeout("TLS handshake timed out") from None
        except (OSError, ssl.SSLError) as exc:
            await self.aclose()
            raise httpcore.ConnectError(f"TLS handshake failed: {exc}") from exc
        p.transport = transport
        return AsyncioStream(p)

    def get_extra_info(self, info: str) -> Any:
        p = self._protocol
        transport = p.transport
        if info == "is_readable":  # an idle keep-alive connection with data or EOF is dead
            return bool(p.buffer) or p.eof or p.closed
        if transport is None:
            return None
        if info == "ssl_object":
            return transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return transport.get_extra_info("sockname")
        if info == "server_addr":
            return transport.get_extra_info("peername")
        if info == "socket":
            return transport.get_extra_info("socket")
        return None


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> AsyncioStream:
        loop = asyncio.get_running_loop()
        protocol = _Protocol()
        try:
            async with asyncio.timeout(timeout):
                await loop.create_connection(
                    lambda: protocol, host, port, local_addr=(local_address, 0) if local_address else None
                )
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"connect to {host}:{port} timed out") from None
        except OSError as exc:
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        sock = protocol.transport.get_extra_info("socket") if protocol.transport else None
        for option in socket_options or ():
            with contextlib.suppress(OSError):
                sock.setsockopt(*option)
        return AsyncioStream(protocol)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> AsyncioStream:
        loop = asyncio.get_running_loop()
        protocol = _Protocol()
        try:
            async with asyncio.timeout(timeout):
                await loop.create_unix_connection(lambda: protocol, path)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"connect to {path} timed out") from None
        except OSError as exc:
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        return AsyncioStream(protocol)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
