"""GET /metrics (monitor.http.metrics): gzip when the scraper asks, the body sent as it is handed over."""

from __future__ import annotations

import gzip

import httpx
import pytest

from monitor.http.app import build_app
from monitor.http.health import Health
from monitor.http.metrics import accepts_gzip, gzip_chunks
from monitor.http.server import StatusServer


@pytest.mark.parametrize(
    ("header", "gzipped"),
    [("gzip", True), ("deflate, gzip;q=0.5", True), ("*", True), ("gzip;q=0", False), ("identity", False), ("", False)],
)
def test_accept_encoding(header, gzipped):
    assert accepts_gzip(header) is gzipped


def test_metrics_are_gzipped_when_the_scraper_asks():
    body = [b"# HELP a A\n# TYPE a gauge\n", b"".join(b'a{n="%d"} 1.0\n' % i for i in range(5000))]
    assert gzip.decompress(b"".join(gzip_chunks(body))) == b"".join(body)
    server = StatusServer("127.0.0.1", 0, build_app(lambda: list(body), lambda: Health(True, {})))
    server.start()
    try:
        url = f"http://127.0.0.1:{server.port}/metrics"
        zipped = httpx.get(url, headers={"Accept-Encoding": "gzip"})
        plain = httpx.get(url, headers={"Accept-Encoding": "identity"})
    finally:
        server.stop()
    assert zipped.headers["content-encoding"] == "gzip" and zipped.content == b"".join(body)  # httpx decodes it
    assert int(zipped.headers["content-length"]) < len(b"".join(body)) / 5
    assert "content-encoding" not in plain.headers and plain.content == b"".join(body)
