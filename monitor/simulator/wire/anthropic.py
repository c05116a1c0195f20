"""`anthropic`: `POST /v1/messages`, Anthropic Messages SSE.

message_start (usage: input tokens, output_tokens 1) → content_block_start →
ping, all at once; then thinking_delta… + signature_delta in a thinking block
for reasoning models, text_delta… in a text block; content_block_stop →
message_delta (cumulative usage.output_tokens) → message_stop.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from monitor.simulator.answers import choice_of, scripted
from monitor.simulator.request import HttpError, Request
from monitor.simulator.wire.base import (
    Call,
    Outcome,
    SSEEncoder,
    StreamInfo,
    Template,
    bearer,
    body_object,
    dumps,
    hole,
    marked_prefix,
    optional_int,
    prompt_chars,
    prompt_text,
)

_ERROR_TYPES = {
    "rate_limited": "rate_limit_error",
    "server_error": "api_error",
    "overloaded": "overloaded_error",
    "auth": "authentication_error",
    "client_error": "invalid_request_error",
    "not_found": "not_found_error",
}


_DELTAS = {
    kind: Template(
        {"type": "content_block_delta", "index": hole("index"), "delta": {"type": f"{kind}_delta", kind: hole("text")}}
    )
    for kind in ("thinking", "text")
}


def _answer(body: dict[str, Any]):
    tools = [
        (t["name"], t.get("input_schema")) for t in body.get("tools") or () if isinstance(t, dict) and t.get("name")
    ]
    mode, forced = choice_of(body.get("tool_choice"))
    fmt = (body.get("output_config") or {}).get("format") if isinstance(body.get("output_config"), dict) else None
    return scripted(tools, mode, fmt.get("schema") if isinstance(fmt, dict) else None, forced)


class AnthropicEncoder(SSEEncoder):
    protocol = "anthropic"
    explicit_cache = True  # only a `cache_control` breakpoint caches
    id_header = "request-id"
    overloaded_status = 529
    ratelimit_headers = ("anthropic-ratelimit-requests-remaining", "anthropic-ratelimit-tokens-remaining")

    @classmethod
    def route(cls, method: str, path: str) -> dict[str, str] | None:
        return {} if path == "/v1/messages" else None

    @classmethod
    def read_call(cls, req: Request, params: Mapping[str, str]) -> Call:
        body = body_object(req)
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise HttpError(400, "model: Field required")
        max_tokens = optional_int(body.get("max_tokens"), "max_tokens")
        if max_tokens is None:
            raise HttpError(400, "max_tokens: Field required")
        if body.get("stream") is not True:
            raise HttpError(400, "the simulator only streams: set stream to true")
        key = req.headers.get("x-api-key")
        if key is None:  # OAuth-style bearer tokens are accepted too
            key = bearer(req.headers)
        return Call(
            model=model,
            max_tokens=max_tokens,
            api_key=key,
            prompt_chars=prompt_chars(body.get("messages")) + prompt_chars(body.get("system")),
            prompt_text=prompt_text(body.get("messages"), body.get("system")),
            answer=_answer(body),
            cache_prefix=marked_prefix(body.get("system"), body.get("messages")),
        )

    @classmethod
    def error_body(cls, status: int, kind: str, message: str, request_id: str) -> tuple[bytes, list[tuple[str, str]]]:
        error = {"type": _ERROR_TYPES.get(kind, "api_error"), "message": message}
        return dumps({"type": "error", "error": error, "request_id": request_id}), []

    def __init__(self, info: StreamInfo) -> None:
        super().__init__(info)
        self._index = -1
        self._block: str | None = None  # "thinking" or "text"

    def _event(self, name: str, payload: dict[str, Any]) -> bytes:
        return self.sse(dumps({"type": name, **payload}), name)

    def _start_block(self, kind: str) -> bytes:
        self._index += 1
        self._block = kind
        block = (
            {"type": "thinking", "thinking": "", "signature": ""}
            if kind == "thinking"
            else {"type": "text", "text": ""}
        )
        return self._event("content_block_start", {"index": self._index, "content_block": block})

    def _stop_block(self) -> bytes:
        out = b""
        if self._block == "thinking":
            signature = base64.b64encode(self.info.request_id.encode() * 3).decode()
            out = self._event(
                "content_block_delta",
                {"index": self._index, "delta": {"type": "signature_delta", "signature": signature}},
            )
        self._block = None
        return out + self._event("content_block_stop", {"index": self._index})

    def open(self) -> bytes:
        usage = {
            **_cache_usage(self.info),
            "output_tokens": 1,
            "service_tier": "standard",
        }
        message = {
            "model": self.info.model,
            "id": "msg_" + self.info.request_id.removeprefix("req_"),
            "type": "message",
            "role": "assistant",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage,
        }
        # The first block's kind is known up front: thinking models think first.
        first = "thinking" if self.info.options.get("reasoning") else "text"
        return (
            self._event("message_start", {"message": message})
            + self._start_block(first)
            + self.sse(b'{"type": "ping"}', "ping")
        )

    def delta(self, reasoning: bool, text: str, tokens: int = 1) -> bytes:
        kind = "thinking" if reasoning else "text"
        out = b""
        if self._block != kind:
            if self._block is not None:
                out = self._stop_block()
            out += self._start_block(kind)
        return out + self.sse(_DELTAS[kind].render(index=self._index, text=text), "content_block_delta")

    def tool_delta(self, name: str, arguments: str, first: bool) -> bytes:
        out = b""
        if first:
            out = self._stop_block() if self._block is not None else b""
            self._index += 1
            self._block = "tool_use"
            block = {"type": "tool_use", "id": "toolu_" + self.info.request_id[-12:], "name": name, "input": {}}
            out += self._event("content_block_start", {"index": self._index, "content_block": block})
        delta = {"type": "input_json_delta", "partial_json": arguments}
        return out + self._event("content_block_delta", {"index": self._index, "delta": delta})

    def close(self, outcome: Outcome) -> bytes:
        tool = self._block == "tool_use"
        out = self._stop_block() if self._block is not None else b""
        stop_reason = "max_tokens" if outcome.finish == "length" else "tool_use" if tool else "end_turn"
        message_delta: dict[str, Any] = {"delta": {"stop_reason": stop_reason, "stop_sequence": None}}
        if self.info.usage:
            message_delta["usage"] = {
                **_cache_usage(self.info),
                "output_tokens": outcome.output_tokens,
            }
        return out + self._event("message_delta", message_delta) + self._event("message_stop", {})

    def stream_error(self, throttle: bool) -> bytes:
        if throttle:
            error = {
                "details": None,
                "type": "rate_limit_error",
                "message": "Number of requests has exceeded your rate limit",
            }
        else:
            error = {"details": None, "type": "overloaded_error", "message": "Overloaded"}
        # The real in-stream error names the request, as the HTTP error body does
        # ({"type":"error","error":{…},"request_id":"req_…"}, quoted in user reports).
        return self._event("error", {"error": error, "request_id": self.info.request_id})

    def malformed(self) -> bytes:
        payload = b'{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":"' % max(
            self._index, 0
        )
        return self.sse(payload, "content_block_delta")


def _cache_usage(info: StreamInfo) -> dict[str, int]:
    """Anthropic's input split: `input_tokens` is what was neither read from nor written to the cache."""
    read, written = info.cache_read_tokens, info.cache_write_tokens
    return {
        "input_tokens": max(0, info.prompt_tokens - read - written),
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": read,
    }
