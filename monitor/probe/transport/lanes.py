"""The HTTP client the probes share, with a per-request connection trace.

httpx/httpcore report connect and TLS phases through the `trace` extension,
but resolve DNS inside the TCP connect. To report `dns_ms` separately, the
network backend resolves the host itself (timed) and connects to the address;
TLS still verifies the original host name, which httpcore passes to
`start_tls` from the request URL, not from what we connected to.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import socket
import ssl
import time
from collections.abc import AsyncIterator, Mapping
from urllib.parse import urlsplit

import certifi
import httpcore
import httpx

from monitor.probe.transport.backend import AsyncioBackend
from monitor.probe.transport.proxy import Proxy, environment_proxies, proxy_for
from monitor.probe.transport.trace import CURRENT_TRACE


class ResolvingBackend(httpcore.AsyncNetworkBackend):
    """Resolves (timed) before connecting, so DNS time is its own number."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self._inner = inner or AsyncioBackend()

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        trace = CURRENT_TRACE.get()
        start_ns = time.perf_counter_ns()
        try:
            async with asyncio.timeout(timeout):
                infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, TimeoutError) as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
        if trace is not None:
            trace.dns_ns = time.perf_counter_ns() - start_ns
        last_error: Exception | None = None
        for _family, _type, _proto, _name, sockaddr in _unique(infos):
            try:
                return await self._inner.connect_tcp(sockaddr[0], port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last_error = exc
        raise last_error or httpcore.ConnectError(f"no address for {host}")

    async def connect_unix_socket(self, path, timeout=None, socket_options=None):
        return await self._inner.connect_unix_socket(path, timeout, socket_options)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def _unique(infos):
    seen = set()
    for info in infos:
        if info[4][0] not in seen:
            seen.add(info[4][0])
            yield info


class TracedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport with the resolving backend underneath, direct or through an egress proxy.

    httpx exposes no way to pass a network backend, so this reaches into two private attributes,
    both read or written once, here, when a lane's client is made (httpx is pinned: see pyproject):

    - `httpx.AsyncHTTPTransport._pool`, the httpcore pool httpx built and that its
      `handle_async_request`, `aclose` and `__aenter__`/`__aexit__` hand every request to, is
      replaced by an equal `httpcore.AsyncConnectionPool` (or, with a proxy, `httpcore.AsyncHTTPProxy`:
      it forwards http:// and tunnels https:// with CONNECT, the TLS handshake being with the
      provider; monitor/probe/transport/proxy.py) whose `network_backend` is `ResolvingBackend`
      over backend.py's `AsyncioBackend`;
    - `httpcore.AsyncConnectionPool._ssl_context` of the pool httpx built is the context httpx
      derived from `verify` (ours, or its unverified one for `verify=False`), read so the new pool
      handshakes exactly as httpx's would have.

    Without them the probe runs on httpcore's default backend (anyio), and what it measures
    changes: `dns_ms` is gone (resolution happens inside the connect, counted in `connect_ms`);
    the arrival stamp is gone (`trace.read_ns`, set by `AsyncioStream.read` from when the bytes
    came off the socket, which `probe/runner.py` takes as each event's time), so TTFT and every
    inter-token gap would include the time anyio, httpcore and httpx spend passing the bytes up,
    plus anyio's per-read cancel-scope cost (DESIGN §1: stamp when the bytes arrive, then parse);
    and a request leaves in several writes (head, body) instead of one.

    Why not a transport of our own over httpcore (an `httpx.AsyncBaseTransport`)? It would have to
    redo what `handle_async_request` does: turn the httpx request into httpcore's (URL, headers,
    stream, the `trace` and `timeout` extensions), wrap the response stream, and map httpcore's
    exceptions onto httpx's (`httpx._transports.default.map_httpcore_exceptions`, private too),
    which `probe/runner.py` classifies errors by (`httpx.ConnectError`, `RemoteProtocolError`, ...):
    more private behaviour copied than the two attributes used here, on the path every timestamp
    takes. If an httpx upgrade moves either attribute, the constructor fails at the first lane
    (an AttributeError, not a silent change), and tests/probe/test_runner.py (`dns_ms`) and
    tests/probe/transport/test_lanes.py (TLS through the pool, connection reuse) say so.
    """

    def __init__(self, limits: httpx.Limits, verify: bool | ssl.SSLContext = True, proxy: Proxy | None = None) -> None:
        super().__init__(limits=limits, verify=_ssl_context(verify), retries=0)
        old = self._pool
        self.via_proxy = proxy.label if proxy is not None else None
        pool = dict(
            ssl_context=old._ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            http1=True,
            http2=False,
            retries=0,
            network_backend=ResolvingBackend(),
        )
        if proxy is None:
            self._pool = httpcore.AsyncConnectionPool(**pool)
        else:
            auth = (proxy.username or "", proxy.password or "") if proxy.username is not None else None
            https_proxy = default_ssl_context() if proxy.url.startswith("https:") else None
            self._pool = httpcore.AsyncHTTPProxy(
                proxy_url=proxy.url, proxy_auth=auth, proxy_ssl_context=https_proxy, **pool
            )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        trace = CURRENT_TRACE.get()
        if trace is not None:
            trace.via_proxy = self.via_proxy
        return await super().handle_async_request(request)


@functools.cache
def default_ssl_context() -> ssl.SSLContext:
    """One verified context for every client: building one costs ~50 ms of CPU
    (it parses the CA bundle), which would stall the loop, and the probes in
    flight with it, each time a lane opens."""
    return ssl.create_default_context(cafile=certifi.where())


def _ssl_context(verify: bool | ssl.SSLContext) -> ssl.SSLContext | bool:
    if verify is True:
        return default_ssl_context()
    return verify


def make_client(
    max_connections: int = 1000,
    keepalive_expiry_s: float = 330.0,
    verify: bool | ssl.SSLContext = True,
    proxy: Proxy | None = None,
) -> httpx.AsyncClient:
    """One pooled client for all probes.

    Connections are kept alive across probe intervals (default 5.5 min covers
    the default 5 min interval): a user's application keeps its connections
    warm too, and `connection_reused`/`connect_ms` say when one was not.
    """
    limits = httpx.Limits(
        max_connections=max_connections,
        max_keepalive_connections=max_connections,
        keepalive_expiry=keepalive_expiry_s,
    )
    return httpx.AsyncClient(
        transport=TracedTransport(limits, verify=verify, proxy=proxy),
        timeout=httpx.Timeout(None),  # the probe enforces its own deadlines
        follow_redirects=False,
        trust_env=False,  # the proxy environment is read once, by ClientLanes (proxy.py)
        headers={"user-agent": "firsttoken/0.1 (+synthetic monitor)"},
    )


async def warm_up(hosts: tuple[str, ...] = ("localhost",)) -> None:
    """Pay one-off start-up costs before the first timed probe.

    The first connection through anyio imports its asyncio backend and the
    first getaddrinfo starts the resolver thread pool: together ~100 ms on a
    busy 2-core machine, which would otherwise land inside the first TTFT.
    """
    import anyio

    default_ssl_context()
    await anyio.sleep(0)
    loop = asyncio.get_running_loop()
    for host in hosts:
        with contextlib.suppress(OSError):  # the probe itself will report it as `connect`
            await loop.getaddrinfo(host, 443, type=socket.SOCK_STREAM)
    try:
        stream = await anyio.connect_tcp("127.0.0.1", 9)  # discard port: usually refused, at once
        await stream.aclose()
    except OSError:
        pass


@functools.lru_cache(maxsize=4096)
def _proxy_for(url: str, setting: str | None, env_proxies: tuple[tuple[str, str], ...]) -> Proxy | None:
    # Cached: a probe start must not parse NO_PROXY again (the answer for a URL never changes).
    return proxy_for(url, setting, dict(env_proxies))


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class ClientLanes:
    """Single-connection clients, one lent to each probe in flight.

    httpcore's pool rescans every connection (quadratically, with a socket
    readability check each) whenever a request starts or ends; at 50
    streams to one host that cost more than the SDK's whole overhead (see
    benchmarks/accuracy.py). A pool of one connection makes that scan O(1),
    so each probe gets a lane of its own: an idle lane for its origin (and
    egress proxy) if there is one (most recently used first, as its
    connection is the most likely to be alive), else a new one.
    """

    def __init__(
        self, keepalive_expiry_s: float = 330.0, verify: bool = True, environ: Mapping[str, str] | None = None
    ) -> None:
        self._keepalive_expiry_s = keepalive_expiry_s
        self._verify = verify
        self._env_proxies = environment_proxies(os.environ if environ is None else environ)
        self._idle: dict[tuple[str, Proxy | None], list[httpx.AsyncClient]] = {}
        self._all: list[httpx.AsyncClient] = []

    def proxy(self, url: str, setting: str | None = None) -> Proxy | None:
        """The egress proxy for `url` under a provider's `proxy:` setting (None: the environment decides)."""
        return _proxy_for(url, setting, tuple(sorted(self._env_proxies.items())))

    @contextlib.asynccontextmanager
    async def lane(self, url: str, proxy_setting: str | None = None) -> AsyncIterator[httpx.AsyncClient]:
        proxy = self.proxy(url, proxy_setting)
        idle = self._idle.setdefault((origin_of(url), proxy), [])
        if idle:
            client = idle.pop()
        else:
            client = make_client(
                max_connections=1, keepalive_expiry_s=self._keepalive_expiry_s, verify=self._verify, proxy=proxy
            )
            self._all.append(client)
        try:
            yield client
        finally:
            idle.append(client)

    @property
    def size(self) -> int:
        return len(self._all)

    async def aclose(self) -> None:
        for client in self._all:
            with contextlib.suppress(Exception):
                await client.aclose()
        self._all.clear()
        self._idle.clear()

    async def __aenter__(self) -> ClientLanes:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
