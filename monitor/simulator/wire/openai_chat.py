"""`openai-chat`: `POST /v1/chat/completions`, SSE chunks shaped like api.openai.com.

Role-only first chunk at once; `reasoning_content` deltas (the DeepSeek
spelling most compatible hosts use) before `content` deltas; a finish chunk;
with `stream_options.include_usage` a usage chunk with `choices: []`
(and `"usage": null` on every earlier chunk, as OpenAI does); `[DONE]`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, ClassVar

from monitor.simulator.answers import choice_of, openai_tools, scripted
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
    optional_int,
    prompt_chars,
    prompt_text,
)

_OPENAI_TYPES = {
    "rate_limited": ("requests", "rate_limit_exceeded"),
    "server_error": ("server_error", None),
    "overloaded": ("server_error", "overloaded"),
    "auth": ("invalid_request_error", "invalid_api_key"),
    "client_error": ("invalid_request_error", None),
    "not_found": ("invalid_request_error", "not_found"),
}


def read_chat_call(req: Request, body: dict[str, Any], model: str, api_key: str | None) -> Call:
    if body.get("stream") is not True:
        raise HttpError(400, "the simulator only streams: set stream to true")
    max_tokens = optional_int(body.get("max_completion_tokens"), "max_completion_tokens")
    if max_tokens is None:
        max_tokens = optional_int(body.get("max_tokens"), "max_tokens")
    options = body.get("stream_options") or {}
    include_usage = isinstance(options, dict) and options.get("include_usage") is True
    return Call(
        model=model,
        max_tokens=max_tokens,
        include_usage=include_usage,
        api_key=api_key,
        prompt_chars=prompt_chars(body.get("messages")),
        prompt_text=prompt_text(body.get("messages")),
        answer=_answer(body),
    )


DEFAULT_FINGERPRINT = "fp_simulator"


def _answer(body: dict[str, Any]):
    mode, forced = choice_of(body.get("tool_choice"))
    fmt = body.get("response_format")
    schema = (fmt.get("json_schema") or {}).get("schema") if isinstance(fmt, dict) else None
    return scripted(openai_tools(body.get("tools")), mode, schema, forced)


def _chunk(
    id_: str,
    created: Any,
    model: str,
    usage_null: bool,
    delta: dict[str, Any],
    finish: str | None,
    filters: Any,
    route: tuple[str | None, str] = (None, DEFAULT_FINGERPRINT),
) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    if filters is not None:
        choice["content_filter_results"] = filters
    provider, fingerprint = route
    chunk: dict[str, Any] = {"id": id_}
    if provider is not None:  # OpenRouter: the upstream, top level, on every chunk
        chunk["provider"] = provider
    chunk.update(
        {
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": fingerprint,
            "choices": [choice],
        }
    )
    if usage_null:
        chunk["usage"] = None
    return chunk


class OpenAIChatEncoder(SSEEncoder):
    protocol = "openai-chat"
    base_path = "/v1"
    _filter_results: ClassVar[dict[str, Any] | None] = None  # Azure's content filter annotations

    @classmethod
    def route(cls, method: str, path: str) -> dict[str, str] | None:
        return {} if path == "/v1/chat/completions" else None

    @classmethod
    def read_call(cls, req: Request, params: Mapping[str, str]) -> Call:
        body = body_object(req)
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise HttpError(400, "you must provide a model parameter")
        return read_chat_call(req, body, model, bearer(req.headers))

    @classmethod
    def error_body(cls, status: int, kind: str, message: str, request_id: str) -> tuple[bytes, list[tuple[str, str]]]:
        type_, code = _OPENAI_TYPES.get(kind, ("server_error", None))
        return dumps({"error": {"message": message, "type": type_, "param": None, "code": code}}), []

    def __init__(self, info: StreamInfo) -> None:
        super().__init__(info)
        self._id = "chatcmpl-" + info.request_id.removeprefix("req_")
        self._usage_null = info.usage  # OpenAI adds "usage": null to every chunk when usage is on
        self._route = (info.options.get("provider"), info.options.get("fingerprint") or DEFAULT_FINGERPRINT)
        templates = self._delta_templates(info.model, info.usage, self._route)
        self._delta = [t.bind(id=self._id, created=info.created_s) for t in templates]

    @classmethod
    @functools.lru_cache(maxsize=1024)
    def _delta_templates(cls, model: str, usage_null: bool, route: tuple[str | None, str]) -> tuple[Template, Template]:
        """(answer, reasoning) delta chunks per model and route, shared by every request of it."""
        return tuple(  # type: ignore[return-value]
            Template(
                _chunk(
                    hole("id"),
                    hole("created"),
                    model,
                    usage_null,
                    {key: hole("text")},
                    None,
                    cls._filter_results,
                    route,
                )
            )
            for key in ("content", "reasoning_content")
        )

    def _chunk(self, delta: dict[str, Any], finish: str | None = None, filters: Any = None) -> dict[str, Any]:
        return _chunk(
            self._id, self.info.created_s, self.info.model, self._usage_null, delta, finish, filters, self._route
        )

    def open(self) -> bytes:
        role = {"role": "assistant", "content": "", "refusal": None}
        return self.sse(dumps(self._chunk(role, filters={} if self._filter_results is not None else None)))

    def delta(self, reasoning: bool, text: str, tokens: int = 1) -> bytes:
        return self.sse(self._delta[reasoning].render(text=text))

    def tool_delta(self, name: str, arguments: str, first: bool) -> bytes:
        call: dict[str, Any] = {"index": 0, "function": {"arguments": arguments}}
        if first:
            call = {"index": 0, "id": "call_" + self._id[-12:], "type": "function", "function": {"name": name}}
            call["function"]["arguments"] = arguments
        return self.sse(dumps(self._chunk({"tool_calls": [call]}, filters=self._filter_results)))

    def close(self, outcome: Outcome) -> bytes:
        filters = {} if self._filter_results is not None else None
        out = self.sse(dumps(self._chunk({}, finish=outcome.finish, filters=filters)))
        if self.info.usage:
            usage_chunk = self._chunk({})
            usage_chunk["choices"] = []
            usage_chunk["usage"] = {
                "prompt_tokens": self.info.prompt_tokens,
                "completion_tokens": outcome.output_tokens,
                "total_tokens": self.info.prompt_tokens + outcome.output_tokens,
                "prompt_tokens_details": {"cached_tokens": self.info.cache_read_tokens, "audio_tokens": 0},
                "completion_tokens_details": {
                    "reasoning_tokens": outcome.reasoning_tokens,
                    "audio_tokens": 0,
                    "accepted_prediction_tokens": 0,
                    "rejected_prediction_tokens": 0,
                },
            }
            out += self.sse(dumps(usage_chunk))
        return out + self.sse(b"[DONE]")

    def stream_error(self, throttle: bool) -> bytes:
        if throttle:
            error = {
                "message": "Rate limit reached for requests. Please try again in 2s.",
                "type": "requests",
                "param": None,
                "code": "rate_limit_exceeded",
            }
        else:
            error = {
                "message": "The server had an error while processing your request. Sorry about that!",
                "type": "server_error",
                "param": None,
                "code": None,
            }
        return self.sse(dumps({"error": error}))

    def malformed(self) -> bytes:
        return self.sse(
            b'{"id":"' + self._id.encode() + b'","object":"chat.completion.chunk","choices":[{"delta":{"con'
        )
