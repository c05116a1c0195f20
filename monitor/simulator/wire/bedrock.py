"""`bedrock-converse`: `POST /model/{modelId}/converse-stream`, binary eventstream.

messageStart → contentBlockDelta… (`reasoningContent` text then a signature
in block 0 for reasoning models, `text` after) → contentBlockStop →
messageStop → metadata (usage, metrics.latencyMs). Errors inside the stream
are `:message-type: exception` frames. An `Authorization` header is required:
SigV4 (never verified) or a Bedrock API key as a bearer token (checked
against `--api-key` when that is set).
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import unquote

from monitor.simulator.answers import scripted
from monitor.simulator.request import HttpError, Request
from monitor.simulator.wire import eventstream
from monitor.simulator.wire.base import (
    Call,
    Outcome,
    StreamInfo,
    Template,
    WireEncoder,
    bearer,
    body_object,
    dumps,
    hole,
    marked_prefix,
    optional_int,
    prompt_chars,
    prompt_text,
)

_ERRORS = {
    "rate_limited": "ThrottlingException",
    "server_error": "InternalServerException",
    "overloaded": "ServiceUnavailableException",
    "auth": "UnrecognizedClientException",
    "client_error": "ValidationException",
    "not_found": "ResourceNotFoundException",
}
_PREFIX, _SUFFIX = "/model/", "/converse-stream"


def sigv4_access_key(headers: Mapping[str, str]) -> str | None:
    """The access key id of a SigV4 Authorization header, or None without one."""
    auth = headers.get("authorization", "")
    if not auth.startswith("AWS4-HMAC-SHA256 "):
        return None
    for item in auth[len("AWS4-HMAC-SHA256 ") :].split(","):
        name, _, value = item.strip().partition("=")
        if name == "Credential":
            return value.split("/", 1)[0]
    return ""


_DELTAS = (
    Template({"contentBlockIndex": hole("index"), "delta": {"text": hole("text")}}),
    Template({"contentBlockIndex": hole("index"), "delta": {"reasoningContent": {"text": hole("text")}}}),
)


def _answer(body: dict[str, Any]):
    config = body.get("toolConfig") if isinstance(body.get("toolConfig"), dict) else {}
    tools = [
        (spec["name"], (spec.get("inputSchema") or {}).get("json"))
        for t in config.get("tools") or ()
        if isinstance(t, dict) and isinstance(spec := t.get("toolSpec"), dict) and spec.get("name")
    ]
    choice = config.get("toolChoice") if isinstance(config.get("toolChoice"), dict) else {}
    forced = (choice.get("tool") or {}).get("name") if isinstance(choice.get("tool"), dict) else None
    fmt = (
        ((body.get("outputConfig") or {}).get("textFormat") or {}) if isinstance(body.get("outputConfig"), dict) else {}
    )
    schema = ((fmt.get("structure") or {}).get("jsonSchema") or {}).get("schema") if isinstance(fmt, dict) else None
    return scripted(tools, "required" if forced else None, schema, forced)


class BedrockEncoder(WireEncoder):
    protocol = "bedrock-converse"
    explicit_cache = True  # only a `cachePoint` block caches
    content_type = "application/vnd.amazon.eventstream"
    id_header = "x-amzn-RequestId"  # AWS's spelling (header names are case-insensitive)
    auth_status = 403  # AWS answers bad credentials with 403, not 401
    requires_credentials = True

    @classmethod
    def route(cls, method: str, path: str) -> dict[str, str] | None:
        if path.startswith(_PREFIX) and path.endswith(_SUFFIX):
            model = path[len(_PREFIX) : -len(_SUFFIX)]
            if model and "/" not in model:
                return {"model": unquote(model)}
        return None

    @classmethod
    def read_call(cls, req: Request, params: Mapping[str, str]) -> Call:
        body = body_object(req)
        config = body.get("inferenceConfig") or {}
        if not isinstance(config, dict):
            raise HttpError(400, "inferenceConfig must be an object")
        token = bearer(req.headers)
        return Call(
            model=params["model"],
            max_tokens=optional_int(config.get("maxTokens"), "inferenceConfig.maxTokens"),
            api_key=token if token is not None else sigv4_access_key(req.headers),
            verify_key=token is not None,
            prompt_chars=prompt_chars(body.get("messages")) + prompt_chars(body.get("system")),
            prompt_text=prompt_text(body.get("messages"), body.get("system")),
            answer=_answer(body),
            cache_prefix=marked_prefix(body.get("system"), body.get("messages")),
        )

    @classmethod
    def error_body(cls, status: int, kind: str, message: str, request_id: str) -> tuple[bytes, list[tuple[str, str]]]:
        name = _ERRORS.get(kind, "InternalServerException")
        if kind == "auth" and "key" not in message.lower():
            message = "The security token included in the request is invalid."
        return dumps({"message": message}), [
            ("x-amzn-errortype", f"{name}:http://internal.amazon.com/coral/com.amazon.bedrock/")
        ]

    def __init__(self, info: StreamInfo) -> None:
        super().__init__(info)
        self._index = -1
        self._block: str | None = None

    def _event(self, event_type: str, payload: dict[str, Any] | bytes) -> bytes:
        data = payload if isinstance(payload, bytes) else dumps(payload)
        return eventstream.event(event_type, self.payload(data))

    def open(self) -> bytes:
        return self._event("messageStart", {"role": "assistant"})

    def _stop_block(self) -> bytes:
        out = b""
        if self._block == "reasoning":
            signature = base64.b64encode(self.info.request_id.encode() * 3).decode()
            delta = {"contentBlockIndex": self._index, "delta": {"reasoningContent": {"signature": signature}}}
            out = self._event("contentBlockDelta", delta)
        self._block = None
        return out + self._event("contentBlockStop", {"contentBlockIndex": self._index})

    def delta(self, reasoning: bool, text: str, tokens: int = 1) -> bytes:
        kind = "reasoning" if reasoning else "text"
        out = b""
        if self._block != kind:
            if self._block is not None:
                out = self._stop_block()
            self._index += 1
            self._block = kind
        payload = _DELTAS[reasoning].render(index=self._index, text=text)
        return out + self._event("contentBlockDelta", payload)

    def tool_delta(self, name: str, arguments: str, first: bool) -> bytes:
        out = b""
        if first:
            out = self._stop_block() if self._block is not None else b""
            self._index += 1
            self._block = "tool"
            start = {"toolUse": {"toolUseId": "tooluse_" + self.info.request_id[-12:], "name": name}}
            out += self._event("contentBlockStart", {"contentBlockIndex": self._index, "start": start})
        delta = {"contentBlockIndex": self._index, "delta": {"toolUse": {"input": arguments}}}
        return out + self._event("contentBlockDelta", delta)

    def close(self, outcome: Outcome) -> bytes:
        tool = self._block == "tool"
        out = self._stop_block() if self._block is not None else b""
        stop = "max_tokens" if outcome.finish == "length" else "tool_use" if tool else "end_turn"
        out += self._event("messageStop", {"stopReason": stop})
        metadata: dict[str, Any] = {}
        if self.info.usage:
            read, written = self.info.cache_read_tokens, self.info.cache_write_tokens
            # inputTokens leaves out what was read from or written to the cache.
            metadata["usage"] = {
                "inputTokens": max(0, self.info.prompt_tokens - read - written),
                "outputTokens": outcome.output_tokens,
                "totalTokens": self.info.prompt_tokens + outcome.output_tokens,
            }
            if read or written:
                metadata["usage"].update(cacheReadInputTokens=read, cacheWriteInputTokens=written)
        metadata["metrics"] = {"latencyMs": round((outcome.end_ns - outcome.arrival_ns) / 1e6)}
        return out + self._event("metadata", metadata)

    def stream_error(self, throttle: bool) -> bytes:
        if throttle:
            payload = {"message": "Too many requests, please wait before trying again."}
            return eventstream.exception("throttlingException", dumps(payload))
        payload = {"message": "The model encountered an error while streaming.", "originalStatusCode": 500}
        return eventstream.exception("modelStreamErrorException", dumps(payload))

    def malformed(self) -> bytes:
        return eventstream.event("contentBlockDelta", b'{"contentBlockIndex":0,"delta":{"text":"')

    def huge_line(self, size: int, piece: int = 64 * 1024) -> Iterator[bytes]:
        """A binary protocol has no lines: one valid frame whose payload is `size` bytes."""
        head = b'{"contentBlockIndex":0,"delta":{"text":"'
        tail = b'"}}'
        filler_len = max(0, size - len(head) - len(tail))
        raw_headers = eventstream.event_headers("contentBlockDelta")
        total = eventstream.PRELUDE_BYTES + len(raw_headers) + len(head) + filler_len + len(tail) + 4
        prelude = total.to_bytes(4, "big") + len(raw_headers).to_bytes(4, "big")
        start = prelude + zlib.crc32(prelude).to_bytes(4, "big") + raw_headers + head
        crc = zlib.crc32(start)
        yield start
        filler = b"a" * piece
        for sent in range(0, filler_len, piece):
            chunk = filler[: min(piece, filler_len - sent)]
            crc = zlib.crc32(chunk, crc)
            yield chunk
        yield tail + zlib.crc32(tail, crc).to_bytes(4, "big")
