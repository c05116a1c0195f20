"""Test-side request builders and independent stream parsers for every protocol.

Deliberately separate from `monitor/protocols/`: these check the simulator
against the wire formats themselves (Bedrock through botocore's decoder).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from botocore.eventstream import EventStreamBuffer

PROTOCOLS = ("openai-chat", "azure-openai", "openai-responses", "anthropic", "gemini", "bedrock-converse", "ollama")
SIGV4 = (
    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20250101/us-east-1/bedrock/aws4_request, "
    "SignedHeaders=host;x-amz-date, Signature=deadbeef"
)


def build(
    protocol: str,
    model: str,
    *,
    prompt: str = "Explain TTFT in one sentence.",
    max_tokens: int | None = None,
    include_usage: bool = True,
    sse: bool = True,
    key: str = "test-key",
) -> tuple[str, dict[str, str], dict[str, Any]]:
    """(path, headers, json body) of a streaming request."""
    messages = [{"role": "user", "content": prompt}]
    if protocol in ("openai-chat", "azure-openai"):
        body: dict[str, Any] = {"model": model, "messages": messages, "stream": True}
        if include_usage:
            body["stream_options"] = {"include_usage": True}
        if max_tokens is not None:
            body["max_completion_tokens"] = max_tokens
        if protocol == "openai-chat":
            return "/v1/chat/completions", {"authorization": f"Bearer {key}"}, body
        del body["model"]
        return f"/openai/deployments/{model}/chat/completions?api-version=2024-10-21", {"api-key": key}, body
    if protocol == "openai-responses":
        body = {"model": model, "input": prompt, "stream": True}
        if max_tokens is not None:
            body["max_output_tokens"] = max_tokens
        return "/v1/responses", {"authorization": f"Bearer {key}"}, body
    if protocol == "anthropic":
        body = {"model": model, "messages": messages, "max_tokens": max_tokens or 1024, "stream": True}
        return "/v1/messages", {"x-api-key": key, "anthropic-version": "2023-06-01"}, body
    if protocol == "gemini":
        body = {"contents": [{"role": "user", "parts": [{"text": prompt}]}]}
        if max_tokens is not None:
            body["generationConfig"] = {"maxOutputTokens": max_tokens}
        query = "?alt=sse" if sse else ""
        return f"/v1beta/models/{model}:streamGenerateContent{query}", {"x-goog-api-key": key}, body
    if protocol == "bedrock-converse":
        body = {"messages": [{"role": "user", "content": [{"text": prompt}]}]}
        if max_tokens is not None:
            body["inferenceConfig"] = {"maxTokens": max_tokens}
        from urllib.parse import quote

        return f"/model/{quote(model, safe='')}/converse-stream", {"authorization": SIGV4}, body
    if protocol == "ollama":
        body = {"model": model, "messages": messages}
        if max_tokens is not None:
            body["options"] = {"num_predict": max_tokens}
        return "/api/chat", {"authorization": f"Bearer {key}"}, body
    raise ValueError(protocol)


@dataclass
class Parsed:
    events: list[Any] = field(default_factory=list)  # (name, payload) in order
    tokens: list[tuple[str, str]] = field(default_factory=list)  # ("answer" | "reasoning", text)
    terminal: bool = False
    error: Any = None
    usage: Any = None
    malformed: int = 0  # events whose JSON did not parse

    @property
    def answer(self) -> str:
        return "".join(text for kind, text in self.tokens if kind == "answer")

    @property
    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.tokens]


def sse_events(body: bytes) -> list[tuple[str | None, bytes]]:
    """(event name, data) per SSE event; accepts LF and CRLF framing."""
    out = []
    text = body.replace(b"\r\n", b"\n")
    for block in text.split(b"\n\n"):
        if not block.strip():
            continue
        name, data = None, []
        for line in block.split(b"\n"):
            if line.startswith(b"event:"):
                name = line[6:].strip().decode()
            elif line.startswith(b"data:"):
                data.append(line[5:].lstrip(b" "))
        out.append((name, b"\n".join(data)))
    return out


def _loads(data: bytes, parsed: Parsed) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        parsed.malformed += 1
        return None


def parse(protocol: str, body: bytes, content_type: str = "") -> Parsed:
    if protocol in ("openai-chat", "azure-openai"):
        return _parse_chat(body)
    if protocol == "openai-responses":
        return _parse_responses(body)
    if protocol == "anthropic":
        return _parse_anthropic(body)
    if protocol == "gemini":
        return _parse_gemini(body, sse="event-stream" in content_type)
    if protocol == "bedrock-converse":
        return _parse_bedrock(body)
    if protocol == "ollama":
        return _parse_ollama(body)
    raise ValueError(protocol)


def _parse_chat(body: bytes) -> Parsed:
    p = Parsed()
    for _, data in sse_events(body):
        if data == b"[DONE]":
            p.terminal = True
            continue
        chunk = _loads(data, p)
        if chunk is None:
            continue
        p.events.append(chunk)
        if "error" in chunk:
            p.error = chunk["error"]
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            if delta.get("reasoning_content"):
                p.tokens.append(("reasoning", delta["reasoning_content"]))
            if delta.get("content"):
                p.tokens.append(("answer", delta["content"]))
        if chunk.get("usage"):
            p.usage = chunk["usage"]
    return p


def _parse_responses(body: bytes) -> Parsed:
    p = Parsed()
    for name, data in sse_events(body):
        event = _loads(data, p)
        if event is None:
            continue
        p.events.append((name, event))
        kind = event.get("type")
        if kind == "response.output_text.delta":
            p.tokens.append(("answer", event["delta"]))
        elif kind == "response.reasoning_summary_text.delta":
            p.tokens.append(("reasoning", event["delta"]))
        elif kind in ("response.completed", "response.incomplete"):
            p.terminal = True
            p.usage = event["response"]["usage"]
        elif kind in ("error", "response.failed"):
            p.error = p.error or event
    return p


def _parse_anthropic(body: bytes) -> Parsed:
    p = Parsed()
    for name, data in sse_events(body):
        event = _loads(data, p)
        if event is None:
            continue
        p.events.append((name, event))
        if name == "content_block_delta":
            delta = event["delta"]
            if delta["type"] == "text_delta":
                p.tokens.append(("answer", delta["text"]))
            elif delta["type"] == "thinking_delta":
                p.tokens.append(("reasoning", delta["thinking"]))
        elif name == "message_delta" and "usage" in event:
            p.usage = event["usage"]
        elif name == "message_stop":
            p.terminal = True
        elif name == "error":
            p.error = event["error"]
    return p


def _gemini_chunk(chunk: dict[str, Any], p: Parsed) -> None:
    p.events.append(chunk)
    if "error" in chunk:
        p.error = chunk["error"]
        return
    for candidate in chunk.get("candidates") or ():
        for part in candidate.get("content", {}).get("parts") or ():
            if part.get("text"):
                p.tokens.append(("reasoning" if part.get("thought") else "answer", part["text"]))
        if candidate.get("finishReason"):
            p.terminal = True
    if "usageMetadata" in chunk:
        p.usage = chunk["usageMetadata"]


def _parse_gemini(body: bytes, sse: bool) -> Parsed:
    p = Parsed()
    if sse:
        for _, data in sse_events(body):
            chunk = _loads(data, p)
            if chunk is not None:
                _gemini_chunk(chunk, p)
        return p
    text = body.strip()
    closed = text.endswith(b"]")
    text = text.removeprefix(b"[").removesuffix(b"]")
    for element in text.split(b"\r\n,\r\n") if text else ():
        chunk = _loads(element, p)
        if chunk is not None:
            _gemini_chunk(chunk, p)
    p.terminal = p.terminal and closed
    return p


def _parse_bedrock(body: bytes) -> Parsed:
    p = Parsed()
    buffer = EventStreamBuffer()
    buffer.add_data(body)
    for message in buffer:
        headers = message.headers
        payload = _loads(message.payload, p)
        p.events.append((headers, payload))
        if headers.get(":message-type") == "exception":
            p.error = (headers[":exception-type"], payload)
            continue
        event = headers.get(":event-type")
        if payload is None:
            continue
        if event == "contentBlockDelta":
            delta = payload["delta"]
            if delta.get("text"):
                p.tokens.append(("answer", delta["text"]))
            elif delta.get("reasoningContent", {}).get("text"):
                p.tokens.append(("reasoning", delta["reasoningContent"]["text"]))
        elif event == "metadata":
            p.terminal = True
            p.usage = payload.get("usage")
    return p


def _parse_ollama(body: bytes) -> Parsed:
    p = Parsed()
    for line in body.split(b"\n"):
        if not line.strip():
            continue
        obj = _loads(line, p)
        if obj is None:
            continue
        p.events.append(obj)
        if "error" in obj:
            p.error = obj["error"]
            continue
        message = obj.get("message") or {}
        if message.get("thinking"):
            p.tokens.append(("reasoning", message["thinking"]))
        if message.get("content"):
            p.tokens.append(("answer", message["content"]))
        if obj.get("done"):
            p.terminal = True
            p.usage = {k: v for k, v in obj.items() if k.endswith(("_count", "_duration"))}
    return p


def output_tokens(protocol: str, usage: Any) -> int:
    """The output token count each protocol's usage reports, reasoning included."""
    if protocol in ("openai-chat", "azure-openai"):
        return usage["completion_tokens"]
    if protocol in ("openai-responses", "anthropic"):
        return usage["output_tokens"]
    if protocol == "gemini":
        return usage.get("candidatesTokenCount", 0) + usage.get("thoughtsTokenCount", 0)
    if protocol == "bedrock-converse":
        return usage["outputTokens"]
    return usage["eval_count"]


def dechunk(body: bytes) -> bytes:
    """The payload of a chunked HTTP/1.1 body (all of it must be present)."""
    out, pos = bytearray(), 0
    while True:
        end = body.index(b"\r\n", pos)
        size = int(body[pos:end].split(b";")[0], 16)
        if size == 0:
            return bytes(out)
        out += body[end + 2 : end + 2 + size]
        pos = end + 2 + size + 2


async def raw_exchange(
    port: int, path: str, headers: dict[str, str], body: dict[str, Any]
) -> tuple[int, dict[str, str], bytes]:
    """One request on its own connection with a bare asyncio client (cheap on CPU,
    so a 200-stream burst measures the server, not the client)."""
    import asyncio

    data = json.dumps(body).encode()
    head = f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
    head += f"content-length: {len(data)}\r\nconnection: close\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(head.encode() + data)
    raw = await reader.read()
    writer.close()
    head_bytes, _, rest = raw.partition(b"\r\n\r\n")
    status_line, *lines = head_bytes.decode("latin-1").split("\r\n")
    response_headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    chunked = response_headers.get("transfer-encoding") == "chunked"
    return int(status_line.split()[1]), response_headers, dechunk(rest) if chunked else rest
