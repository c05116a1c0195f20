"""HTTP/1.1 handling, the control API, keys, logs, scenarios and the ways to start it."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from monitor.simulator.run import run_simulator
from monitor.simulator.testing import SimulatorThread, wait_for

from .simwire import SIGV4, build, dechunk, parse


def _recv_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Read one response (Content-Length or chunked) from a raw socket."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, rest = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    if "content-length" in headers:
        while len(rest) < int(headers["content-length"]):
            rest += sock.recv(65536)
        return int(status_line.split()[1]), headers, rest
    while not rest.endswith(b"0\r\n\r\n"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return int(status_line.split()[1]), headers, dechunk(rest)


def _raw_request(path: str, headers: dict[str, str], body: dict) -> bytes:
    data = json.dumps(body).encode()
    lines = [f"POST {path} HTTP/1.1", "host: 127.0.0.1", f"content-length: {len(data)}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


def test_keep_alive_serves_many_requests_on_one_connection(sim) -> None:
    with socket.create_connection(("127.0.0.1", sim.port)) as sock:
        for protocol in ("openai-chat", "anthropic", "bedrock-converse", "ollama", "openai-chat"):
            path, headers, body = build(protocol, "sim:ttft=1:itl=1:tokens=3")
            sock.sendall(_raw_request(path, headers, body))
            status, response_headers, payload = _recv_response(sock)
            assert status == 200 and "connection" not in response_headers
            assert len(parse(protocol, payload, response_headers["content-type"]).tokens) == 3
        sock.sendall(b"GET /_sim/health HTTP/1.1\r\nhost: x\r\n\r\n")
        assert _recv_response(sock)[0] == 200


def test_truncated_stream_leaves_the_connection_usable(sim) -> None:
    with socket.create_connection(("127.0.0.1", sim.port)) as sock:
        path, headers, body = build("openai-chat", "sim:ttft=1:itl=1:tokens=4:fault=truncate")
        sock.sendall(_raw_request(path, headers, body))
        assert not parse("openai-chat", _recv_response(sock)[2]).terminal
        sock.sendall(b"GET /_sim/health HTTP/1.1\r\nhost: x\r\n\r\n")
        assert _recv_response(sock)[0] == 200


@pytest.mark.parametrize(
    "raw",
    [
        b"NONSENSE\r\n\r\n",
        b"GET /x HTTP/9.9\r\nhost: x\r\n\r\n",
        b"POST /v1/chat/completions HTTP/1.1\r\nbad header line\r\n\r\n",
        b"POST /v1/chat/completions HTTP/1.1\r\ncontent-length: nope\r\n\r\n",
    ],
)
def test_malformed_requests_get_400_and_close(sim, raw: bytes) -> None:
    with socket.create_connection(("127.0.0.1", sim.port)) as sock:
        sock.sendall(raw)
        status, headers, body = _recv_response(sock)
        assert status == 400 and headers["connection"] == "close"
        assert "message" in json.loads(body)["error"]
        assert sock.recv(1) == b""  # closed


def test_oversized_body_is_refused(sim) -> None:
    with socket.create_connection(("127.0.0.1", sim.port)) as sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\ncontent-length: 999999999\r\n\r\n")
        assert _recv_response(sock)[0] == 413


def test_unknown_path_and_wrong_method(client: httpx.Client) -> None:
    response = client.post("/v2/nothing", json={})
    assert response.status_code == 404 and "Unknown request URL" in response.json()["error"]["message"]
    assert response.headers["x-request-id"]
    response = client.get("/v1/chat/completions")
    assert response.status_code == 405 and response.headers["allow"] == "POST"


@pytest.mark.parametrize("body", [b"{not json", b"[1, 2]", b""])
def test_bad_json_body_is_400_in_the_protocol_shape(client: httpx.Client, body: bytes) -> None:
    response = client.post("/v1/messages", content=body, headers={"x-api-key": "k"})
    assert response.status_code == 400
    payload = response.json()
    assert payload["type"] == "error" and payload["error"]["type"] == "invalid_request_error"


def test_stream_false_is_refused(client: httpx.Client) -> None:
    response = client.post("/v1/chat/completions", json={"model": "m", "messages": []})
    assert response.status_code == 400 and "stream" in response.json()["error"]["message"]


def test_chunked_request_body_and_expect_continue(sim) -> None:
    path, _headers, body = build("ollama", "sim:ttft=1:tokens=2")
    data = json.dumps(body).encode()
    with socket.create_connection(("127.0.0.1", sim.port)) as sock:
        head = f"POST {path} HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\nexpect: 100-continue\r\n\r\n"
        sock.sendall(head.encode())
        assert sock.recv(100).startswith(b"HTTP/1.1 100 Continue")
        sock.sendall(b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data))
        status, _, payload = _recv_response(sock)
        assert status == 200 and len(parse("ollama", payload).tokens) == 2


def test_client_going_away_mid_stream_is_noticed(sim) -> None:
    path, headers, body = build("openai-chat", "sim:ttft=1:itl=50:tokens=100")
    with socket.create_connection(("127.0.0.1", sim.port)) as sock:
        sock.sendall(_raw_request(path, headers, body))
        head = sock.recv(65536)
        request_id = next(
            line.split(b": ")[1].decode() for line in head.split(b"\r\n") if line.startswith(b"x-request-id")
        )
    assert wait_for(lambda: sim.truth(request_id)["client_gone"], timeout_s=5)
    truth = sim.truth(request_id)
    assert not truth["completed"] and truth["token_count"] < 100 and truth["end_ns"]


def test_control_api(client: httpx.Client, model_name: str) -> None:
    response = client.put(f"/_sim/models/{model_name}", json={"ttft_ms": 5, "fault": "empty"})
    assert response.status_code == 200 and response.json()["behaviour"]["ttft_ms"] == 5
    assert client.get("/_sim/models").json()["models"][model_name]["fault"] == "empty"
    assert client.get(f"/_sim/models/{model_name}").json()["known"] is True
    assert client.get("/_sim/models/sim:ttft=3").json()["behaviour"]["ttft_ms"] == 3
    bad = client.put(f"/_sim/models/{model_name}", json={"ttft_ms": -1})
    assert bad.status_code == 400 and "ttft_ms" in bad.json()["error"]["message"]
    assert client.put(f"/_sim/models/{model_name}", content=b"{oops").status_code == 400
    assert client.put(f"/_sim/models/{model_name}", json={"colour": 1}).status_code == 400
    # A name with slashes, as OpenRouter model ids have.
    assert client.put("/_sim/models/meta-llama/llama-x", json={"itl_ms": 3}).json()["name"] == "meta-llama/llama-x"
    assert client.delete(f"/_sim/models/{model_name}").status_code == 200
    assert client.delete(f"/_sim/models/{model_name}").status_code == 404
    assert client.get("/_sim/truth/req_unknown").status_code == 404
    health = client.get("/_sim/health").json()
    assert health["status"] == "ok" and health["requests"] >= 1 and "active_streams" in health
    assert client.get("/_sim/nothing").status_code == 404


def test_upsert_changes_live_behaviour(client: httpx.Client, sim, model_name: str) -> None:
    path, headers, body = build("gemini", model_name)
    sim.set_model(model_name, ttft_ms=1, output_tokens=2, jitter=0)
    assert len(parse("gemini", client.post(path, headers=headers, json=body).content, "text/event-stream").tokens) == 2
    sim.set_model(model_name, fault="server_error")
    assert client.post(path, headers=headers, json=body).status_code == 500


def test_api_key_is_enforced_where_the_protocol_has_one() -> None:
    with SimulatorThread(api_key="good-key") as sim, httpx.Client(base_url=sim.base_url, timeout=10) as client:
        for protocol in ("openai-chat", "azure-openai", "openai-responses", "anthropic", "gemini"):
            path, headers, body = build(protocol, "sim:ttft=1:tokens=1", key="good-key")
            assert client.post(path, headers=headers, json=body).status_code == 200, protocol
            path, headers, body = build(protocol, "sim:ttft=1:tokens=1", key="bad-key")
            assert client.post(path, headers=headers, json=body).status_code == 401, protocol
            assert client.post(path, json=body).status_code == 401, protocol
        path, _, body = build("bedrock-converse", "sim:ttft=1:tokens=1")
        assert client.post(path, json=body, headers={"authorization": SIGV4}).status_code == 200
        assert client.post(path, json=body, headers={"authorization": "Bearer good-key"}).status_code == 200
        assert client.post(path, json=body, headers={"authorization": "Bearer bad-key"}).status_code == 403
        path, _, body = build("ollama", "sim:ttft=1:tokens=1")
        assert client.post(path, json=body).status_code == 200  # Ollama has no keys


def test_truth_log_and_thread_helpers(tmp_path: Path) -> None:
    log = tmp_path / "truth.jsonl"
    with SimulatorThread(truth_log=log, use_uvloop=False) as sim, httpx.Client(base_url=sim.base_url) as client:
        ids = []
        for protocol in ("openai-chat", "anthropic"):
            path, headers, body = build(protocol, "sim:ttft=1:tokens=2")
            ids.append(client.post(path, headers=headers, json=body).headers["x-request-id"])
        sim.set_model("thread-model", ttft_ms=1, output_tokens=1)
        path, headers, body = build("ollama", "thread-model")
        ids.append(client.post(path, headers=headers, json=body).headers["x-request-id"])
        assert sim.truth(ids[-1])["token_count"] == 1
        assert sim.truth("req_none") is None
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["request_id"] for r in records] == ids
    assert set(records[0]) >= {
        "request_id",
        "protocol",
        "model",
        "arrival_ns",
        "headers_sent_ns",
        "first_token_ns",
        "last_token_ns",
        "token_count",
        "fault",
        "status",
    }


def test_scenario_through_the_thread_helper(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text("models:\n  scripted: {ttft_ms: 1, output_tokens: 4, jitter: 0}\n")
    with SimulatorThread(scenario=scenario) as sim, httpx.Client(base_url=sim.base_url) as client:
        path, headers, body = build("anthropic", "scripted")
        assert len(parse("anthropic", client.post(path, headers=headers, json=body).content).tokens) == 4


def test_module_entry_point_prints_the_ready_line(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "monitor.simulator", "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("firsttoken simulator listening on http://127.0.0.1:")
        port = int(line.strip().rsplit(":", 1)[1])
        assert port > 0 and httpx.get(f"http://127.0.0.1:{port}/_sim/health").status_code == 200
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
        process.stdout.close()


def test_run_simulator_reports_a_bad_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "bad.yaml"
    scenario.write_text("models:\n  x: {ttft_ms: fast}\n")
    assert run_simulator(["--port", "0", "--scenario", str(scenario)]) == 2
    assert "models.x.ttft_ms" in capsys.readouterr().err


def test_run_simulator_reports_a_busy_port(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        started = time.monotonic()
        assert run_simulator(["--port", str(port)]) == 1
        assert time.monotonic() - started < 5
    assert "cannot listen" in capsys.readouterr().err
