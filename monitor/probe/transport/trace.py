"""Per-request connection trace, shared by the HTTP client and the network backend."""

from __future__ import annotations

import time
from contextvars import ContextVar
from typing import Any

# The trace of the probe running in the current task. The network backend is
# shared by the pool, so it finds the probe to credit DNS time to here.
CURRENT_TRACE: ContextVar[ConnectionTrace | None] = ContextVar("firsttoken_trace", default=None)


class ConnectionTrace:
    """Timestamps (perf_counter_ns) of one request's connection phases."""

    __slots__ = (
        "connect_end_ns",
        "connect_start_ns",
        "dns_ns",
        "headers_ns",
        "read_ns",
        "tls_end_ns",
        "tls_start_ns",
        "via_proxy",
    )

    def __init__(self) -> None:
        self.dns_ns: int | None = None
        self.connect_start_ns: int | None = None
        self.connect_end_ns: int | None = None
        self.tls_start_ns: int | None = None
        self.tls_end_ns: int | None = None
        self.headers_ns: int | None = None
        # When the bytes of the latest read came off the socket (set by the
        # network backend); the probe stamps what it parses with this.
        self.read_ns: int | None = None
        # The egress proxy's origin when the request went through one (set by the transport):
        # connect and DNS are then the proxy's, TLS the provider's inside the CONNECT tunnel.
        self.via_proxy: str | None = None

    async def __call__(self, name: str, info: dict[str, Any]) -> None:
        now = time.perf_counter_ns()
        if name == "connection.connect_tcp.started":
            self.connect_start_ns = now
        elif name == "connection.connect_tcp.complete":
            self.connect_end_ns = now
        elif name in ("connection.start_tls.started", "proxy.start_tls.started"):
            self.tls_start_ns = now  # proxy.*: the provider's handshake inside a CONNECT tunnel
        elif name in ("connection.start_tls.complete", "proxy.start_tls.complete"):
            self.tls_end_ns = now
        elif name.endswith(".receive_response_headers.complete"):
            self.headers_ns = self.read_ns or now

    @property
    def connection_reused(self) -> bool:
        return self.connect_start_ns is None

    @property
    def dns_ms(self) -> float | None:
        return None if self.dns_ns is None else self.dns_ns / 1e6

    @property
    def connect_ms(self) -> float | None:
        """TCP connect time, DNS excluded."""
        if self.connect_start_ns is None or self.connect_end_ns is None:
            return None
        return max(0, self.connect_end_ns - self.connect_start_ns - (self.dns_ns or 0)) / 1e6

    @property
    def tls_ms(self) -> float | None:
        if self.tls_start_ns is None or self.tls_end_ns is None:
            return None
        return (self.tls_end_ns - self.tls_start_ns) / 1e6
