"""The probe's own protocol modules understand the simulator, request and response.

The simulator stands in for the providers in every probe test and benchmark,
so its streams must mean to `monitor/protocols/` what the real ones mean.
"""

from __future__ import annotations

import httpx
import pytest

from monitor.protocols.base import (
    Finished,
    Message,
    ProbeRequest,
    StreamFailure,
    TokenDelta,
    TokenKind,
    UsageReport,
    get_protocol,
)

from .simwire import PROTOCOLS


def run_probe(sim, protocol: str, model: str, max_tokens: int = 256) -> tuple[httpx.Response, list]:
    base = sim.base_url + ("/v1" if protocol in ("openai-chat", "openai-responses") else "")
    wire = get_protocol(protocol)
    request = wire.build_request(
        ProbeRequest(
            base_url=base,
            model=model,
            messages=(Message("user", "Explain TTFT in one sentence."),),
            max_tokens=max_tokens,
            api_key="test-key",
        )
    )
    response = httpx.request(request.method, request.url, headers=request.headers, content=request.body, timeout=10)
    assert wire.accepts_content_type(response.headers.get("content-type")), response.headers.get("content-type")
    assert wire.request_id(response.headers) == response.headers["x-request-id"]
    parser = wire.new_parser()
    events = parser.feed(response.content) + parser.close()
    return response, events


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_probe_parsers_read_complete_streams(sim, protocol: str) -> None:
    response, events = run_probe(sim, protocol, "sim:ttft=2:itl=1:tokens=6:reasoning=2")
    assert response.status_code == 200
    tokens = [e for e in events if isinstance(e, TokenDelta)]
    assert [t.kind for t in tokens] == [TokenKind.REASONING] * 2 + [TokenKind.ANSWER] * 6
    assert any(isinstance(e, Finished) for e in events)
    usage = [e for e in events if isinstance(e, UsageReport) and e.output_tokens is not None]
    assert usage and usage[-1].output_tokens == 8
    assert not any(isinstance(e, StreamFailure) for e in events)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_probe_parsers_see_stream_errors(sim, protocol: str) -> None:
    _, events = run_probe(sim, protocol, "sim:ttft=1:itl=1:tokens=4:fault=stream_error")
    assert any(isinstance(e, StreamFailure) for e in events)
    assert not any(isinstance(e, Finished) for e in events)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_probe_parsers_see_truncation(sim, protocol: str) -> None:
    _, events = run_probe(sim, protocol, "sim:ttft=1:itl=1:tokens=4:fault=truncate")
    assert len([e for e in events if isinstance(e, TokenDelta)]) == 2
    assert not any(isinstance(e, Finished | StreamFailure) for e in events)
