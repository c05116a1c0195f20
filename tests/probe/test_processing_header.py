"""The provider's own processing time from its response headers (attribution's "not the network")."""

from __future__ import annotations

import httpx

from monitor.probe.runner import processing_ms_from


def test_openai_processing_ms_is_read_and_bad_values_are_ignored():
    assert processing_ms_from(httpx.Headers({"openai-processing-ms": "312"})) == 312.0
    assert processing_ms_from(httpx.Headers({"x-processing-ms": "12.5"})) == 12.5
    assert processing_ms_from(httpx.Headers({"openai-processing-ms": "soon"})) is None
    assert processing_ms_from(httpx.Headers({"openai-processing-ms": "-4"})) is None
    assert processing_ms_from(httpx.Headers({"openai-processing-ms": "nan"})) is None
    assert processing_ms_from(httpx.Headers({})) is None
