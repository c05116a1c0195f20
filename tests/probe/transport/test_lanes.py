"""The HTTP edge: TLS through the asyncio backend, connection traces, lanes."""

from __future__ import annotations

import asyncio
import ssl
import subprocess
import threading
from pathlib import Path

import pytest

from monitor.eventloop import run_async
from monitor.probe.runner import probe_target
from monitor.probe.transport.lanes import ClientLanes, origin_of, warm_up


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, made with the system's openssl."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


class TlsProxy:
    """Terminates TLS on loopback and pipes the bytes to the simulator."""

    def __init__(self, cert: Path, key: Path, upstream_port: int) -> None:
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.context.load_cert_chain(cert, key)
        self.upstream_port = upstream_port
        self.port = 0
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TlsProxy:
        self._thread.start()
        self._ready.wait(5)
        return self

    def __exit__(self, *exc) -> None:
        # Connections still piping are cancelled and awaited on the proxy's loop before it stops, so no
        # copy coroutine is left behind for the garbage collector to complain about.
        asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()

    async def _shutdown(self) -> None:
        self._server.close()
        pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(asyncio.start_server(self._pipe, "127.0.0.1", 0, ssl=self.context))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _pipe(self, reader, writer) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)

        async def copy(src, dst):
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            finally:
                dst.close()

        await asyncio.gather(copy(reader, up_writer), copy(up_reader, writer), return_exceptions=True)


def test_https_probe_measures_tls_and_reuses_the_connection(simulator, make_target, certificate):
    cert, key = certificate
    trusted = ssl.create_default_context(cafile=str(cert))
    with TlsProxy(cert, key, simulator.port) as proxy:
        target = make_target("sim:ttft=20:itl=2:tokens=5:jitter=0")
        target = type(target)(
            **{**{f: getattr(target, f) for f in target.__slots__}, "base_url": f"https://127.0.0.1:{proxy.port}/v1"}
        )

        async def main():
            await warm_up()
            async with ClientLanes(verify=trusted) as lanes:
                out = []
                for _ in range(2):
                    async with lanes.lane(target.base_url) as client:
                        out.append(await probe_target(client, target))
                return out

        first, second = run_async(main())
    assert first.ok, first.error_message
    assert first.tls_ms is not None and first.tls_ms > 0
    assert first.connection_reused is False
    assert second.ok and second.connection_reused is True and second.tls_ms is None
    assert first.ttft_ms >= 20


def test_untrusted_certificate_is_a_connect_error(simulator, make_target, certificate):
    cert, key = certificate
    with TlsProxy(cert, key, simulator.port) as proxy:
        target = make_target("sim:ttft=5:tokens=2")
        target = type(target)(
            **{**{f: getattr(target, f) for f in target.__slots__}, "base_url": f"https://127.0.0.1:{proxy.port}/v1"}
        )

        async def main():
            async with ClientLanes() as lanes, lanes.lane(target.base_url) as client:
                return await probe_target(client, target)

        sample = run_async(main())
    assert sample.error_kind == "connect"
    assert "certificate" in sample.error_message.lower()


def test_lanes_reuse_idle_clients_per_origin():
    async def main():
        async with ClientLanes() as lanes:
            async with lanes.lane("http://a:1/v1") as first:
                pass
            async with lanes.lane("http://a:1/other") as again, lanes.lane("http://a:1/v1") as concurrent:
                assert again is first and concurrent is not first
            async with lanes.lane("http://b:1") as other:
                assert other is not first
            return lanes.size

    assert run_async(main()) == 3
    assert origin_of("https://api.openai.com/v1/chat") == "https://api.openai.com"
