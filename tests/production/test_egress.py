"""Probes through a real egress proxy (Debian's tinyproxy): forwarded HTTP, CONNECT-tunnelled TLS,
the environment's *_PROXY and NO_PROXY, proxy credentials that never show (issue 22, item 4)."""

from __future__ import annotations

import asyncio
import dataclasses
import ssl

import pytest

from monitor.eventloop import run_async
from monitor.probe.runner import probe_target
from monitor.probe.transport.lanes import ClientLanes, warm_up
from tests.probe.transport.test_lanes import TlsProxy, certificate  # noqa: F401  (a fixture)
from tests.production.servers import Tinyproxy

pytestmark = pytest.mark.integration

USER, PASSWORD = "probe", "Tiny-pr0xy-S3CRET-41"


@pytest.fixture(scope="module")
def tinyproxy():
    with Tinyproxy() as proxy:
        yield proxy


@pytest.fixture(scope="module")
def tinyproxy_with_auth():
    with Tinyproxy(basic_auth=(USER, PASSWORD)) as proxy:
        yield proxy


def probe(target, *, environ=None, verify=True, proxy=None, times=1):
    target = dataclasses.replace(target, proxy=proxy) if proxy is not None else target

    async def main():
        await warm_up()
        async with ClientLanes(verify=verify, environ=environ or {}) as lanes:
            out = []
            for _ in range(times):
                async with lanes.lane(target.base_url, target.proxy) as client:
                    out.append(await probe_target(client, target, secrets=(PASSWORD,)))
                # Probes are an interval apart: tinyproxy's close of the kept-alive connection has arrived by then.
                await asyncio.sleep(0.3)
            return out

    return run_async(main())


def requests_logged(proxy: Tinyproxy, needle: str) -> int:
    """Requests tinyproxy took (one `Request (file descriptor N): METHOD URL` line each) naming `needle`."""
    return sum("Request (" in line and needle in line for line in proxy.log().splitlines())


def test_an_http_provider_is_forwarded_by_the_providers_proxy(simulator, make_target, tinyproxy):
    target = make_target("sim:ttft=30:itl=2:tokens=5:jitter=0")
    before = requests_logged(tinyproxy, f"127.0.0.1:{simulator.port}")
    first, second = probe(target, proxy=tinyproxy.url, times=2)
    assert first.ok and second.ok, (first.error_message, second.error_kind, second.error_message)
    assert first.via_proxy == tinyproxy.url and first.tls_ms is None
    assert first.connect_ms is not None and first.connection_reused is False  # the connection to the proxy
    # (tinyproxy closes its client side after each forwarded request: no reuse to assert here)
    assert first.ttft_ms >= 30
    # tinyproxy saw both requests (it logs the absolute URL of what it forwards)
    assert requests_logged(tinyproxy, f"127.0.0.1:{simulator.port}") - before == 2


def test_a_tls_provider_is_reached_through_a_connect_tunnel(simulator, make_target, certificate, tinyproxy):  # noqa: F811
    cert, key = certificate
    trusted = ssl.create_default_context(cafile=str(cert))
    with TlsProxy(cert, key, simulator.port) as tls:
        target = make_target("sim:ttft=30:itl=2:tokens=5:jitter=0")
        target = dataclasses.replace(target, base_url=f"https://127.0.0.1:{tls.port}/v1")
        before = requests_logged(tinyproxy, f"CONNECT 127.0.0.1:{tls.port}")
        (sample,) = probe(target, environ={"HTTPS_PROXY": tinyproxy.url}, verify=trusted)
    assert sample.ok, sample.error_message
    assert sample.via_proxy == tinyproxy.url
    # The handshake is with the provider (our certificate verified through the tunnel), after the connect to the proxy.
    assert sample.tls_ms is not None and sample.tls_ms > 0 and sample.connect_ms is not None
    assert sample.ttft_ms >= 30 and sample.ttfb_ms <= sample.ttft_ms
    assert requests_logged(tinyproxy, f"CONNECT 127.0.0.1:{tls.port}") - before == 1


def test_the_environment_proxy_and_no_proxy(simulator, make_target, tinyproxy):
    target = make_target("sim:ttft=5:tokens=2:jitter=0")
    needle = f"127.0.0.1:{simulator.port}"
    before = requests_logged(tinyproxy, needle)
    (through,) = probe(target, environ={"HTTP_PROXY": tinyproxy.url})
    assert through.ok and through.via_proxy == tinyproxy.url
    assert requests_logged(tinyproxy, needle) == before + 1
    (direct,) = probe(target, environ={"HTTP_PROXY": tinyproxy.url, "NO_PROXY": "127.0.0.1"})
    (overridden,) = probe(target, environ={"HTTP_PROXY": tinyproxy.url}, proxy="direct")
    assert direct.ok and direct.via_proxy is None
    assert overridden.ok and overridden.via_proxy is None
    assert requests_logged(tinyproxy, needle) == before + 1  # neither went through the proxy


def test_proxy_credentials_work_and_never_show(simulator, make_target, tinyproxy_with_auth):
    target = make_target("sim:ttft=5:tokens=2:jitter=0")
    base = tinyproxy_with_auth.url.replace("http://", "")
    (sample,) = probe(target, proxy=f"http://{USER}:{PASSWORD}@{base}")
    assert sample.ok, sample.error_message
    assert sample.via_proxy == tinyproxy_with_auth.url
    (refused,) = probe(target, proxy=f"http://{USER}:wrong-{PASSWORD}@{base}")
    assert not refused.ok and refused.http_status in (401, 407)  # tinyproxy 1.11 answers 401
    for s in (sample, refused):
        assert PASSWORD not in repr(s.to_dict())
