"""Per-target recent percentiles (/metrics' firsttoken_target_*) and gzip on request."""

from __future__ import annotations

import gzip

import httpx
import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

from monitor.agent.metrics import Health, StatusServer, accepts_gzip, gzip_chunks
from monitor.agent.metrics_window import WindowQuantiles, quantile


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("q", [0.0, 0.1, 0.5, 0.9, 0.99, 1.0])
def test_quantile_interpolates_like_numpy(q):
    values = sorted([0.31, 0.12, 0.5, 0.12, 2.0, 0.7, 0.33])
    assert quantile(values, q) == pytest.approx(np.quantile(values, q))


def test_the_window_keeps_five_minutes_and_a_quiet_target_disappears():
    clock = Clock()
    family = WindowQuantiles("t_seconds", "Doc", ("target",), (0.5, 0.99), window_s=300, clock=clock)
    for value in (0.1, 0.2, 0.3):
        family.observe(("a",), value)
        clock.now += 60
    family.observe(("b",), 1.0)
    parsed = {
        (s.labels["target"], s.labels["quantile"]): s.value
        for f in text_string_to_metric_families(family.render())
        for s in f.samples
    }
    assert parsed == {("a", "0.5"): 0.2, ("a", "0.99"): pytest.approx(0.298), ("b", "0.5"): 1.0, ("b", "0.99"): 1.0}
    clock.now += 181  # a's first two samples (60 and 120 s older than its third) leave the window
    assert 't_seconds{quantile="0.5",target="a"} 0.3\n' in family.render()
    clock.now += 600  # nothing for ten minutes: no series, not a stale value
    assert family.render() == "# HELP t_seconds Doc\n# TYPE t_seconds summary\n"


@pytest.mark.parametrize(
    ("header", "gzipped"),
    [("gzip", True), ("deflate, gzip;q=0.5", True), ("*", True), ("gzip;q=0", False), ("identity", False), ("", False)],
)
def test_accept_encoding(header, gzipped):
    assert accepts_gzip(header) is gzipped


def test_metrics_are_gzipped_when_the_scraper_asks():
    body = [b"# HELP a A\n# TYPE a gauge\n", b"".join(b'a{n="%d"} 1.0\n' % i for i in range(5000))]
    assert gzip.decompress(b"".join(gzip_chunks(body))) == b"".join(body)
    server = StatusServer("127.0.0.1", 0, lambda: list(body), lambda: Health(True, {}))
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
