"""A small hand-written HTTP/1.1 server connection on an asyncio Protocol.

Why not asyncio streams or a framework: the simulator is the ground truth for
measurement benchmarks, so it must stamp the arrival of a request's last byte
as the socket delivers it, put every write on the wire at once (TCP_NODELAY,
one `send` per chunk) and notice a vanished client without a reader task.
It serves keep-alive connections one request at a time, Content-Length and
chunked request bodies, and chunked or Content-Length responses.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import struct
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, cast
from urllib.parse import parse_qsl

from monitor.simulator.request import (
    MAX_BODY_BYTES,
    MAX_HEADER_BYTES,
    HttpError,
    Request,
    content_length,
    parse_head,
    reason,
)

log = logging.getLogger(__name__)

SERVER_NAME = "firsttoken-simulator"


Handler = Callable[["Connection", Request], Awaitable[None]]


class Connection(asyncio.Protocol):
    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self._buf = bytearray()
        self._data_ns = 0
        self._eof = False
        self._waiter: asyncio.Future[None] | None = None
        self._drain_waiter: asyncio.Future[None] | None = None
        self._paused = False
        self._closed_future: asyncio.Future[None] | None = None
        self._task: asyncio.Task[None] | None = None
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.response_started = False
        self.keep_alive = True

    # ------------------------------------------------------------ protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports do not subclass asyncio.Transport, so no isinstance check.
        self.transport = cast(asyncio.Transport, transport)
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):  # tokens must leave at once, not wait for Nagle
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        loop = asyncio.get_running_loop()
        self._closed_future = loop.create_future()
        self._task = loop.create_task(self._serve())

    def data_received(self, data: bytes) -> None:
        self._data_ns = time.perf_counter_ns()
        self._buf += data
        self._wake()

    def eof_received(self) -> bool | None:
        # HTTP clients do not half-close; a FIN means the client has gone.
        self._eof = True
        self._wake()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._wake()
        if self._drain_waiter is not None and not self._drain_waiter.done():
            self._drain_waiter.set_result(None)
        if self._closed_future is not None and not self._closed_future.done():
            self._closed_future.set_result(None)

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        if self._drain_waiter is not None and not self._drain_waiter.done():
            self._drain_waiter.set_result(None)

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def _wait_data(self) -> None:
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    @property
    def gone(self) -> bool:
        """The client closed or reset the connection."""
        return self.closed or self._eof

    # ------------------------------------------------------------ serving
    async def _serve(self) -> None:
        try:
            while not self.gone:
                try:
                    request = await self._read_request()
                except HttpError as exc:
                    self.keep_alive = False
                    self.send_json(exc.status, {"error": {"message": exc.message, "type": "invalid_request"}})
                    break
                if request is None:
                    break
                self.response_started = False
                self.keep_alive = request.keep_alive
                try:
                    await self._handler(self, request)
                except HttpError as exc:
                    if self.response_started:
                        self.abort()
                        break
                    self.send_json(exc.status, {"error": {"message": exc.message, "type": "invalid_request"}})
                except Exception:
                    log.exception("simulator handler failed for %s %s", request.method, request.target)
                    if self.response_started:
                        self.abort()
                        break
                    self.keep_alive = False
                    self.send_json(500, {"error": {"message": "simulator internal error", "type": "server_error"}})
                if not self.keep_alive:
                    break
        finally:
            if self.transport is not None and not self.closed:
                self.transport.close()

    async def _read_request(self) -> Request | None:
        while True:
            while self._buf[:2] == b"\r\n":  # tolerate stray CRLF between requests
                del self._buf[:2]
            end = self._buf.find(b"\r\n\r\n")
            if end >= 0:
                break
            if len(self._buf) > MAX_HEADER_BYTES:
                raise HttpError(431, "request headers too large")
            if self.gone:
                return None
            await self._wait_data()
        head = bytes(self._buf[:end])
        del self._buf[: end + 4]
        method, target, version, headers = parse_head(head)
        if headers.get("expect", "").lower() == "100-continue":
            self.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body = await self._read_chunked_body()
        else:
            body = await self._read_exact(content_length(headers))
        if body is None:
            return None
        path, _, query = target.partition("?")
        connection = headers.get("connection", "").lower()
        keep_alive = "close" not in connection if version == "HTTP/1.1" else "keep-alive" in connection
        return Request(
            method=method,
            target=target,
            path=path,
            query=dict(parse_qsl(query, keep_blank_values=True)),
            headers=headers,
            body=body,
            version=version,
            arrival_ns=self._data_ns,
            keep_alive=keep_alive,
        )

    async def _read_exact(self, n: int) -> bytes | None:
        while len(self._buf) < n:
            if self.gone:
                return None
            await self._wait_data()
        data = bytes(self._buf[:n])
        del self._buf[:n]
        return data

    async def _read_line(self) -> bytes | None:
        while (end := self._buf.find(b"\r\n")) < 0:
            if self.gone or len(self._buf) > MAX_HEADER_BYTES:
                return None
            await self._wait_data()
        line = bytes(self._buf[:end])
        del self._buf[: end + 2]
        return line

    async def _read_chunked_body(self) -> bytes | None:
        body = bytearray()
        while True:
            line = await self._read_line()
            if line is None:
                return None
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise HttpError(400, "bad chunk size in request body") from None
            if size == 0:
                while await self._read_line() not in (b"", None):
                    pass  # trailers: read and ignored
                return bytes(body)
            if len(body) + size > MAX_BODY_BYTES:
                raise HttpError(413, "request body too large")
            data = await self._read_exact(size + 2)
            if data is None:
                return None
            body += data[:-2]

    # ------------------------------------------------------------ writing
    def write(self, data: bytes) -> None:
        if self.transport is not None and not self.closed:
            self.transport.write(data)

    def start_response(
        self, status: int, headers: Iterable[tuple[str, str]], *, length: int | None = None, body: bytes = b""
    ) -> None:
        """Status line and headers, plus the first body bytes, in one write.

        `length=None` means a chunked body; `body` then becomes its first chunk.
        """
        self.response_started = True
        lines = [f"HTTP/1.1 {status} {reason(status)}", f"server: {SERVER_NAME}"]
        lines += [f"{name}: {value}" for name, value in headers]
        lines.append(f"content-length: {length}" if length is not None else "transfer-encoding: chunked")
        if not self.keep_alive:
            lines.append("connection: close")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        if length is None and body:
            head += b"%x\r\n%b\r\n" % (len(body), body)
        else:
            head += body
        self.write(head)

    def write_chunk(self, data: bytes) -> None:
        if data:
            self.write(b"%x\r\n%b\r\n" % (len(data), data))

    def end_chunks(self) -> None:
        self.write(b"0\r\n\r\n")

    def send(self, status: int, content_type: str, body: bytes, headers: Iterable[tuple[str, str]] = ()) -> None:
        self.start_response(status, [("content-type", content_type), *headers], length=len(body), body=body)

    def send_json(self, status: int, payload: Any, headers: Iterable[tuple[str, str]] = ()) -> None:
        body = json.dumps(payload, separators=(",", ":")).encode()
        self.send(status, "application/json", body, headers)

    async def drain(self) -> None:
        """Wait while the socket buffer is full (huge or trickled bodies)."""
        if self._paused and not self.closed:
            self._drain_waiter = asyncio.get_running_loop().create_future()
            try:
                await self._drain_waiter
            finally:
                self._drain_waiter = None

    async def wait_closed(self) -> None:
        """Until the client goes away (FIN or RST)."""
        while not self.gone:
            await self._wait_data()

    def abort(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.abort()
        self.keep_alive = False

    def reset(self) -> None:
        """Abort with a TCP RST: SO_LINGER 0, then close."""
        sock = self.transport.get_extra_info("socket") if self.transport is not None else None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.abort()
