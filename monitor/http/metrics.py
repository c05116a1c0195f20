"""GET /metrics: the Prometheus text the agent's metrics render (monitor.agent.metrics), gzipped
when the scraper asks (Prometheus always does).

The body is sent piece by piece as the metrics hand it over (~64 KB each): never one 20 MB join
holding the GIL while the probes' loop waits for it.
"""

from __future__ import annotations

import zlib

from prometheus_client import CONTENT_TYPE_LATEST

# Level 1: the text is repetitive enough that it already shrinks ~10x, at a fraction of level 6's CPU.
GZIP_LEVEL = 1


def accepts_gzip(accept_encoding: str) -> bool:
    """Does an Accept-Encoding header allow gzip (and not with q=0)?"""
    for item in accept_encoding.split(","):
        coding, _, params = item.strip().partition(";")
        if coding.strip().lower() in ("gzip", "*"):
            weight = params.strip()
            if not weight.startswith("q="):
                return True
            try:
                return float(weight[2:]) > 0
            except ValueError:
                return False
    return False


def gzip_chunks(chunks: list[bytes]) -> list[bytes]:
    """The body gzipped piece by piece: zlib lets the GIL go while it compresses each one."""
    compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)  # 31: gzip framing
    out = [piece for chunk in chunks if (piece := compressor.compress(chunk))]
    out.append(compressor.flush())
    return out


def metrics_response(environ, start_response, chunks: list[bytes]) -> list[bytes]:
    headers = [("Content-Type", CONTENT_TYPE_LATEST), ("Vary", "Accept-Encoding")]
    if accepts_gzip(environ.get("HTTP_ACCEPT_ENCODING", "")):
        chunks = gzip_chunks(chunks)
        headers.append(("Content-Encoding", "gzip"))
    headers.append(("Content-Length", str(sum(map(len, chunks)))))
    start_response("200 OK", headers)
    return chunks
