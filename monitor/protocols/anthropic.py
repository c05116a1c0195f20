"""`anthropic`: the Anthropic Messages API, streamed as SSE.

What counts as a token, and why:
- `text_delta` is answer text; Claude often opens a block with a bare "\\n\\n",
  which is a token for `ttft_ms` but not visible text for `ttft_answer_ms`
  (measure.py applies that rule).
- `thinking_delta` is reasoning; the empty one sent just before the
  `signature_delta` is not a token, and a signature is not generated text.
- `input_json_delta` is tool-call arguments. The tool's name arrives once, in
  the `content_block_start` of a `tool_use` block: it is generated output (as
  OpenAI's `function.name` is), and a tool without arguments streams nothing
  else, so the name is a TOOL token. Other block starts carry no text.
- `redacted_thinking` blocks carry an encrypted blob, not text: no token. Their
  cost still shows in `output_tokens`, which comes from usage.
- `ping`, `message_start`, `content_block_stop` carry no output.

Usage: `message_start` gives input and cache counts; its `output_tokens` is a
placeholder (1 before anything was generated) and is ignored, so a truncated
stream falls back to an estimate rather than claiming one token. The count in
`message_delta` is cumulative and replaces earlier ones. `input_tokens` is
reported as the whole prompt (uncached + cache reads + cache writes), the way
OpenAI and Gemini count it, so providers compare; cache reads are `cached`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from monitor.protocols.base import (
    Event,
    Finished,
    HttpRequest,
    Message,
    ProbeRequest,
    ResponseInfo,
    StreamFailure,
    StreamParser,
    TokenDelta,
    TokenKind,
    UsageReport,
    WireProtocol,
    error_message_from_body,
    join_url,
    json_body,
    register,
    tool_delta,
)
from monitor.protocols.features import forced_tool, reasoning_budget, tool_functions, tool_parameters
from monitor.protocols.route import ANTHROPIC_RATELIMIT, RouteTruth, gateway_route
from monitor.protocols.sse import SSEStreamParser, as_int, loads_json
from monitor.sample import ErrorKind

DEFAULT_VERSION = "2023-06-01"
_TOOL_BLOCKS = ("tool_use", "server_tool_use")


@register
class Anthropic(WireProtocol):
    name = "anthropic"
    genai_provider = "anthropic"  # OpenTelemetry gen_ai.provider.name
    request_id_headers = ("request-id", "x-request-id")

    def build_request(self, req: ProbeRequest) -> HttpRequest:
        system = "\n\n".join(m.content for m in req.messages if m.role == "system")
        body: dict[str, Any] = {
            "model": req.model,
            "max_tokens": req.max_tokens,
            "messages": [{"role": m.role, "content": _content(m)} for m in req.messages if m.role != "system"],
            "stream": True,
        }
        if system:
            body["system"] = system
        _add_features(body, req)
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            "anthropic-version": str(req.options.get("anthropic_version") or DEFAULT_VERSION),
        }
        if req.api_key:
            headers["x-api-key"] = req.api_key
        headers.update(req.headers)
        return HttpRequest("POST", join_url(req.base_url, "v1/messages"), headers, json_body(body, req.params))

    def new_parser(self) -> StreamParser:
        return MessagesParser()

    def route_headers(self, headers: Mapping[str, str]) -> RouteTruth:
        # anthropic-ratelimit-requests-remaining / -tokens-remaining (the most
        # restrictive token limit in force), on every response: docs.anthropic.com
        # rate limits; seen in recorded responses (tidyllm test cassettes).
        return gateway_route(headers, ANTHROPIC_RATELIMIT)

    def config_errors(self, options: Mapping[str, Any], has_api_key: bool) -> list[str]:
        version = options.get("anthropic_version")
        if version is not None and (not isinstance(version, str) or not version):
            return ["options.anthropic_version: must be a version string such as 2023-06-01"]
        return []

    def error_message(self, status: int, body: bytes) -> str:
        # {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}
        try:
            error = json.loads(body).get("error")
        except (ValueError, AttributeError):
            error = None
        if isinstance(error, dict) and error.get("message"):
            return f"HTTP {status}: {_error_text(error)}"
        return error_message_from_body(status, body)


def _content(message: Message) -> str | list[dict[str, Any]]:
    split = message.cache_split()
    if split is None:
        return message.content
    # Anthropic caches only what a breakpoint marks: everything up to and including this block
    # (the system prompt too), for 5 minutes by default, when it is long enough for the model.
    prefix, rest = split
    return [
        {"type": "text", "text": prefix, "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": rest},
    ]


_TOOL_CHOICE = {"auto": {"type": "auto"}, "none": {"type": "none"}, "required": {"type": "any"}}


def _add_features(body: dict[str, Any], req: ProbeRequest) -> None:
    """Sampling, tools, structured output (`output_config.format`, GA on the Claude API) and
    extended thinking in the Messages API's shapes."""
    if req.temperature is not None:
        body["temperature"] = req.temperature
    if req.tools:
        body["tools"] = [
            {"name": fn["name"], "input_schema": tool_parameters(fn)}
            | ({"description": fn["description"]} if fn.get("description") else {})
            for fn in tool_functions(req.tools)
        ]
    if req.tool_choice is not None:
        name = forced_tool(req.tool_choice)
        body["tool_choice"] = {"type": "tool", "name": name} if name else _TOOL_CHOICE[str(req.tool_choice)]
    if req.response_format is not None:
        body["output_config"] = {"format": {"type": "json_schema", "schema": req.response_format.schema}}
    if req.reasoning is not None:
        # Messages takes a budget (at least 1,024), not an effort: an effort maps through
        # features.EFFORT_BUDGET_TOKENS. The budget counts against max_tokens, so the answer keeps
        # its own max_tokens on top of it.
        budget = max(1024, reasoning_budget(req.reasoning))
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        body["max_tokens"] = req.max_tokens + budget


class MessagesParser(SSEStreamParser):
    def __init__(self) -> None:
        super().__init__()
        self._stop_reason: str | None = None
        self._done = False

    def _on_event(self, name: str, data: str, out: list[Event]) -> None:
        if self._done:
            return
        payload = loads_json(data, f"{name or 'message'} event")
        if not isinstance(payload, dict):
            return
        kind = payload.get("type") or name
        if kind == "content_block_delta":
            self._on_delta(payload.get("delta"), out, as_int(payload.get("index")) or 0)
        elif kind == "content_block_start":
            self._on_block_start(payload.get("content_block"), out, as_int(payload.get("index")) or 0)
        elif kind == "message_start":
            message = payload.get("message") or {}
            if isinstance(message, dict):
                model, message_id = message.get("model"), message.get("id")  # msg_…
                if model or message_id:
                    out.append(
                        ResponseInfo(
                            model_version=str(model) if model else None,
                            response_id=message_id if isinstance(message_id, str) and message_id else None,
                        )
                    )
                usage = message.get("usage")
                if isinstance(usage, dict):
                    out.append(_usage(usage, with_output=False))
        elif kind == "message_delta":
            delta = payload.get("delta")
            if isinstance(delta, dict) and delta.get("stop_reason"):
                self._stop_reason = str(delta["stop_reason"])
            usage = payload.get("usage")
            if isinstance(usage, dict):
                out.append(_usage(usage, with_output=True))
        elif kind == "message_stop":
            self._done = True
            out.append(Finished(self._stop_reason))
        elif kind == "error":
            error = payload.get("error")
            error = error if isinstance(error, dict) else {"message": str(error)}
            # A rate limit is the same condition as an HTTP 429, whatever the transport.
            failure = ErrorKind.RATE_LIMITED if error.get("type") == "rate_limit_error" else ErrorKind.STREAM_ERROR
            out.append(StreamFailure(failure, _error_text(error)))
            request_id = payload.get("request_id")  # req_…, as on an HTTP error's body
            if isinstance(request_id, str) and request_id:
                out.append(ResponseInfo(request_id=request_id))
        # ping, content_block_stop and unknown future events carry no output.

    def _on_delta(self, delta: Any, out: list[Event], index: int) -> None:
        if not isinstance(delta, dict):
            return
        kind = delta.get("type")
        if kind == "text_delta":
            _emit(out, TokenKind.ANSWER, delta.get("text"))
        elif kind == "thinking_delta":
            _emit(out, TokenKind.REASONING, delta.get("thinking"))
        elif kind == "input_json_delta":
            _emit_tool(out, index, "", delta.get("partial_json"))
        # signature_delta, citations_delta: metadata about text, not text.

    def _on_block_start(self, block: Any, out: list[Event], index: int) -> None:
        if not isinstance(block, dict):
            return
        kind = block.get("type")
        if kind in _TOOL_BLOCKS:  # the block index names the call; its `input` is streamed, {} here
            _emit_tool(out, index, block.get("name"), "")
        elif kind == "text":  # always "" so far; counted should it ever carry text
            _emit(out, TokenKind.ANSWER, block.get("text"))
        elif kind == "thinking":
            _emit(out, TokenKind.REASONING, block.get("thinking"))
        # redacted_thinking: encrypted data, not text (see module docstring).


def _emit(out: list[Event], kind: TokenKind, text: Any) -> None:
    if isinstance(text, str) and text:
        out.append(TokenDelta(kind, text))


def _emit_tool(out: list[Event], index: int, name: Any, arguments: Any) -> None:
    token = tool_delta(index, name, arguments)
    if token is not None:
        out.append(token)


def _usage(usage: Mapping[str, Any], with_output: bool) -> UsageReport:
    # `input_tokens` excludes cache reads and writes; report the whole prompt, as other protocols do.
    # A response that ran several passes (server-side compaction) lists them in `iterations`, and
    # the top level then holds only the last: the prompt side is the sum of the passes.
    iterations = usage.get("iterations")
    passes = [p for p in iterations if isinstance(p, dict)] if isinstance(iterations, list) else []
    passes = passes or [usage]
    uncached = _sum(passes, "input_tokens")
    read = _sum(passes, "cache_read_input_tokens")
    written = _sum(passes, "cache_creation_input_tokens")
    total_input = None if uncached is None else uncached + (read or 0) + (written or 0)
    return UsageReport(
        output_tokens=as_int(usage.get("output_tokens")) if with_output else None,
        input_tokens=total_input,
        cache_read_tokens=read,
        cache_write_tokens=written,
    )


def _sum(passes: list[Mapping[str, Any]], key: str) -> int | None:
    values = [v for v in (as_int(p.get(key)) for p in passes) if v is not None]
    return sum(values) if values else None


def _error_text(error: Mapping[str, Any]) -> str:
    kind, message = error.get("type"), error.get("message") or ""
    return f"{kind}: {message}" if kind else str(message)
