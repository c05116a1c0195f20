"""Every fault does what it promises, in every protocol it makes sense for."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

import httpx
import pytest
from botocore.eventstream import EventStreamBuffer

from monitor.simulator.testing import wait_for

from .simwire import PROTOCOLS, SIGV4, build, parse, sse_events

KEY = "sk-secret-123456"
# Six tokens; mid-stream faults strike after three (the default: half).
BASE = "sim:ttft=5:itl=2:tokens=6"


@dataclass
class Streamed:
    status: int
    headers: httpx.Headers
    body: bytes = b""
    error: Exception | None = None
    reads: list[tuple[int, bytes]] = field(default_factory=list)  # (perf_counter_ns, bytes)
    headers_ns: int = 0
    t0_ns: int = 0


def stream(client: httpx.Client, protocol: str, model: str, read_timeout_s: float = 10.0, **kw) -> Streamed:
    path, headers, body = build(protocol, model, key=KEY, **kw)
    timeout = httpx.Timeout(10.0, read=read_timeout_s)
    t0 = time.perf_counter_ns()
    with client.stream("POST", path, headers=headers, json=body, timeout=timeout) as response:
        out = Streamed(response.status_code, response.headers, headers_ns=time.perf_counter_ns(), t0_ns=t0)
        try:
            for raw in response.iter_raw():
                out.reads.append((time.perf_counter_ns(), raw))
        except httpx.TransportError as exc:
            out.error = exc
    out.body = b"".join(raw for _, raw in out.reads)
    return out


HTTP_STATUS = {
    "rate_limited": {"*": 429},
    "server_error": {"*": 500},
    "overloaded": {"*": 503, "anthropic": 529},
    "auth": {"*": 401, "bedrock-converse": 403},
    "client_error": {"*": 400},
    "echo_key": {"*": 401, "bedrock-converse": 403},
}


def _error_kind_in_body(protocol: str, status: int, response: httpx.Response) -> None:
    body = response.json()
    if protocol in ("openai-chat", "openai-responses"):
        assert set(body["error"]) == {"message", "type", "param", "code"}
    elif protocol == "azure-openai":
        assert body["error"]["code"] == str(status)
    elif protocol == "anthropic":
        assert body["type"] == "error" and body["error"]["type"].endswith("_error")
        assert body["request_id"] == response.headers["request-id"]
    elif protocol == "gemini":
        assert body["error"]["code"] == status and body["error"]["status"].isupper()
    elif protocol == "bedrock-converse":
        assert "message" in body and response.headers["x-amzn-errortype"].endswith(
            "Exception:http://internal.amazon.com/coral/com.amazon.bedrock/"
        )
    else:
        assert isinstance(body["error"], str)


@pytest.mark.parametrize("fault", sorted(HTTP_STATUS))
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_http_error_faults(client: httpx.Client, sim, protocol: str, fault: str) -> None:
    path, headers, body = build(protocol, f"{BASE}:fault={fault}", key=KEY)
    if protocol == "bedrock-converse" and fault == "echo_key":
        headers = {"authorization": f"Bearer {KEY}"}  # a Bedrock API key
    response = client.post(path, headers=headers, json=body)
    status = HTTP_STATUS[fault].get(protocol, HTTP_STATUS[fault]["*"])
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    _error_kind_in_body(protocol, status, response)
    if fault == "rate_limited":
        assert response.headers["retry-after"] == "2"
    if fault == "echo_key":
        assert KEY in response.text
    truth = sim.truth(response.headers["x-request-id"])
    assert truth["status"] == status and truth["fault"] == fault and truth["token_count"] == 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_hang_sends_headers_then_nothing(client: httpx.Client, sim, protocol: str) -> None:
    out = stream(client, protocol, f"{BASE}:fault=hang", read_timeout_s=0.1)
    assert out.status == 200
    assert isinstance(out.error, httpx.ReadTimeout)
    assert out.body == b""
    request_id = out.headers["x-request-id"]
    assert sim.truth(request_id)["headers_sent_ns"] is not None
    # The client went away (the stream context closed the connection): the server lets go.
    assert wait_for(lambda: sim.truth(request_id)["client_gone"], timeout_s=5)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_slow_headers(client: httpx.Client, sim, protocol: str) -> None:
    out = stream(client, protocol, f"{BASE}:fault=slow_headers:delay=60")
    assert out.status == 200 and (out.headers_ns - out.t0_ns) / 1e6 >= 59
    parsed = parse(protocol, out.body, out.headers["content-type"])
    assert parsed.terminal and len(parsed.tokens) == 6
    truth = sim.truth(out.headers["x-request-id"])
    assert (truth["headers_sent_ns"] - truth["arrival_ns"]) / 1e6 >= 59
    assert (truth["first_token_ns"] - truth["arrival_ns"]) / 1e6 >= 64


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_reset_aborts_with_rst(client: httpx.Client, sim, protocol: str) -> None:
    out = stream(client, protocol, f"{BASE}:fault=reset")
    assert out.status == 200
    assert isinstance(out.error, httpx.ReadError | httpx.RemoteProtocolError), out.error
    truth = sim.truth(out.headers["x-request-id"])
    assert truth["token_count"] == 3 and not truth["completed"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_truncate_ends_cleanly_without_terminal_event(client: httpx.Client, protocol: str) -> None:
    out = stream(client, protocol, f"{BASE}:fault=truncate")
    assert out.status == 200 and out.error is None
    parsed = parse(protocol, out.body, out.headers["content-type"])
    assert len(parsed.tokens) == 3 and not parsed.terminal and parsed.error is None and parsed.malformed == 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_malformed_chunk(client: httpx.Client, protocol: str) -> None:
    out = stream(client, protocol, f"{BASE}:fault=malformed")
    assert out.status == 200 and out.error is None
    parsed = parse(protocol, out.body, out.headers["content-type"])
    assert parsed.malformed == 1 and len(parsed.tokens) == 6


STREAM_ERRORS = {
    "openai-chat": (lambda p: p.error["type"] == "server_error", lambda p: p.error["code"] == "rate_limit_exceeded"),
    "azure-openai": (lambda p: p.error["type"] == "server_error", lambda p: p.error["code"] == "rate_limit_exceeded"),
    "openai-responses": (
        lambda p: p.error["code"] == "server_error" and p.events[-1][0] == "response.failed",
        lambda p: p.error["code"] == "rate_limit_exceeded",
    ),
    "anthropic": (
        lambda p: p.error == {"details": None, "type": "overloaded_error", "message": "Overloaded"},
        lambda p: p.error["type"] == "rate_limit_error",
    ),
    "gemini": (lambda p: p.error["status"] == "UNAVAILABLE", lambda p: p.error["code"] == 429),
    "bedrock-converse": (
        lambda p: p.error[0] == "modelStreamErrorException",
        lambda p: p.error[0] == "throttlingException",
    ),
    "ollama": (lambda p: "stopped" in p.error, lambda p: "busy" in p.error),
}


@pytest.mark.parametrize("fault", ["stream_error", "throttle_stream"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_error_after_200(client: httpx.Client, protocol: str, fault: str) -> None:
    out = stream(client, protocol, f"{BASE}:fault={fault}")
    assert out.status == 200 and out.error is None
    parsed = parse(protocol, out.body, out.headers["content-type"])
    assert len(parsed.tokens) == 3 and not parsed.terminal and parsed.malformed == 0
    check = STREAM_ERRORS[protocol][fault == "throttle_stream"]
    assert check(parsed), parsed.error


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_empty_is_complete_without_tokens(client: httpx.Client, sim, protocol: str) -> None:
    out = stream(client, protocol, f"{BASE}:reasoning=4:fault=empty")
    parsed = parse(protocol, out.body, out.headers["content-type"])
    assert out.status == 200 and parsed.terminal and parsed.tokens == [] and parsed.malformed == 0
    truth = sim.truth(out.headers["x-request-id"])
    assert truth["completed"] and truth["token_count"] == 0 and truth["first_token_ns"] is None


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_huge_line(client: httpx.Client, protocol: str) -> None:
    out = stream(client, protocol, f"{BASE}:fault=huge_line")
    assert out.status == 200 and out.error is None
    assert len(out.body) >= 10 * 1024 * 1024
    if protocol == "bedrock-converse":
        buffer = EventStreamBuffer()
        buffer.add_data(out.body)
        sizes = [len(m.payload) for m in buffer]
        assert max(sizes) >= 10 * 1024 * 1024
    else:
        assert not out.body.endswith(b"\n")
        assert max(len(line) for line in out.body.split(b"\n")) >= 10 * 1024 * 1024
    assert len(out.reads) > 10  # streamed in pieces


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_invalid_utf8(client: httpx.Client, protocol: str) -> None:
    out = stream(client, protocol, f"{BASE}:fault=invalid_utf8")
    assert out.status == 200 and b"\xff\xfe" in out.body
    if protocol == "bedrock-converse":  # frames stay valid (CRC over the broken bytes)
        buffer = EventStreamBuffer()
        buffer.add_data(out.body)
        payloads = [m.payload for m in buffer]
        with pytest.raises(UnicodeDecodeError):
            b"".join(payloads).decode()
    else:
        with pytest.raises(UnicodeDecodeError):
            out.body.decode()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_html_pages(client: httpx.Client, protocol: str) -> None:
    path, headers, body = build(protocol, f"{BASE}:fault=html", key=KEY)
    response = client.post(path, headers=headers, json=body)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    assert response.text.startswith("<!DOCTYPE html>")
    path, headers, body = build(protocol, f"{BASE}:fault=html_502", key=KEY)
    response = client.post(path, headers=headers, json=body)
    assert response.status_code == 502 and response.headers["content-type"].startswith("text/html")
    assert "502 Bad Gateway" in response.text


@pytest.mark.parametrize("protocol", ["openai-chat", "bedrock-converse", "gemini"])
def test_trickle_sends_one_byte_at_a_time(client: httpx.Client, protocol: str) -> None:
    # The server sends a byte, then waits 40 ms. A busy client reads late, which can put two reads
    # close together (a 76 ms gap then a 5 ms one was seen under load), but never early: the k-th
    # byte cannot be here sooner than (k - 1) x 40 ms after the request, whatever the client does.
    path, headers, body = build(protocol, f"{BASE}:fault=trickle:delay=40", key=KEY)
    sent_ns = time.perf_counter_ns()
    with client.stream("POST", path, headers=headers, json=body) as response:
        assert response.status_code == 200
        arrived_ms, data = [], b""
        for raw in response.iter_raw():
            data += raw
            arrived_ms += [(time.perf_counter_ns() - sent_ns) / 1e6] * len(raw)
            if len(data) >= 5:
                break
    assert len(arrived_ms) >= 5
    for k, ms in enumerate(arrived_ms[:5]):
        assert ms >= k * 40 * 0.9, (k, arrived_ms)
    # And the bytes are the stream's own, in order: the stream opens as the protocol's does.
    normal_path, normal_headers, normal_body = build(protocol, BASE, key=KEY)
    assert client.post(normal_path, headers=normal_headers, json=normal_body).content[:5] == data[:5]


def test_trickle_stream_is_valid_when_read_to_the_end(client: httpx.Client) -> None:
    path, headers, body = build("ollama", "sim:ttft=1:tokens=2:fault=trickle:delay=0.2", key=KEY)
    response = client.post(path, headers=headers, json=body)
    parsed = parse("ollama", response.content)
    assert parsed.terminal and len(parsed.tokens) == 2


def test_fault_probability_zero_never_faults(client: httpx.Client) -> None:
    out = stream(client, "openai-chat", f"{BASE}:fault=reset:fault_p=0")
    assert out.error is None and parse("openai-chat", out.body).terminal


def test_bedrock_requires_an_authorization_header(client: httpx.Client) -> None:
    path, _, body = build("bedrock-converse", BASE)
    response = client.post(path, json=body)
    assert response.status_code == 403
    assert response.headers["x-amzn-errortype"].startswith("UnrecognizedClientException")
    assert client.post(path, json=body, headers={"authorization": SIGV4}).status_code == 200


def test_sim_name_errors_name_the_parameter(client: httpx.Client) -> None:
    path, headers, body = build("openai-chat", "sim:ttft=5:bogus=1")
    response = client.post(path, headers=headers, json=body)
    assert response.status_code == 400 and "bogus" in response.json()["error"]["message"]
    path, headers, body = build("anthropic", "sim:fault=nope")
    response = client.post(path, headers=headers, json=body)
    assert response.status_code == 400 and "nope" in json.dumps(response.json())


def test_anthropic_error_after_200_names_the_request(client: httpx.Client) -> None:
    """As the real one does: the in-stream error event carries `request_id`, the `request-id` header's value."""
    out = stream(client, "anthropic", f"{BASE}:fault=stream_error")
    errors = [json.loads(data) for name, data in sse_events(out.body) if name == "error"]
    assert len(errors) == 1 and errors[0]["request_id"] == out.headers["request-id"]
    assert errors[0]["request_id"].startswith("req_")
