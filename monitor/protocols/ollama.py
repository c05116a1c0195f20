"""`ollama`: Ollama's native `/api/chat`, newline-delimited JSON.

Each line is one object: `message.content` is answer text,
`message.thinking` reasoning (thinking models), `message.tool_calls` tool
output (whole calls, name and arguments). `/api/generate` lines carry the
same as top-level `response` / `thinking`; both shapes parse, because
recordings and proxies use either.

The final `done: true` object is the terminal. It holds the counts
(`eval_count` output, `prompt_eval_count` input — only the part of the prompt
not served from Ollama's cache) and the server's own durations in
nanoseconds, kept in `server_timing` as milliseconds: `load_ms` is the model
load a cold start pays, which explains a slow TTFT better than any client
timing can. An `{"error": …}` line after HTTP 200 is `stream_error`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from monitor.protocols.base import (
    Event,
    Finished,
    HttpRequest,
    ProbeRequest,
    ProtocolViolation,
    ResponseInfo,
    StreamFailure,
    StreamParser,
    TokenDelta,
    TokenKind,
    UsageReport,
    WireProtocol,
    join_url,
    json_body,
    register,
    tool_delta,
)
from monitor.protocols.features import forced_tool, reasoning_effort
from monitor.protocols.sse import LineSplitter, as_int, loads_json
from monitor.sample import ErrorKind

# Ollama duration field -> server_timing key (ns become ms).
_DURATIONS = {
    "total_duration": "total_ms",
    "load_duration": "load_ms",
    "prompt_eval_duration": "prompt_eval_ms",
    "eval_duration": "eval_ms",
}


@register
class Ollama(WireProtocol):
    name = "ollama"
    genai_provider = "ollama"  # OpenTelemetry gen_ai.provider.name
    content_types = ("application/x-ndjson", "application/json")

    def build_request(self, req: ProbeRequest) -> HttpRequest:
        body = {
            "model": req.model,
            "messages": [{"role": m.role, "content": m.content} for m in req.messages],
            "stream": True,
            "options": {"num_predict": req.max_tokens},
        }
        _add_features(body, req)
        headers = {"content-type": "application/json", "accept": "application/x-ndjson"}
        if req.api_key:  # Ollama itself has no auth; a reverse proxy in front may
            headers["authorization"] = f"Bearer {req.api_key}"
        headers.update(req.headers)
        return HttpRequest("POST", join_url(req.base_url, "api/chat"), headers, json_body(body, req.params))

    def new_parser(self) -> StreamParser:
        return NDJSONParser()


def _add_features(body: dict[str, Any], req: ProbeRequest) -> None:
    """Sampling, tools, `format` (a JSON Schema) and `think` in /api/chat's shapes.

    /api/chat has no tool_choice: `none` sends no tools, a forced `{name: fn}` sends only
    that function, `auto` and `required` send them all (the prompt must ask for the call).
    `think` takes an effort (gpt-oss) or true; a budget is sent as its nearest effort.
    """
    if req.temperature is not None:
        body["options"]["temperature"] = req.temperature
    tools = [dict(t) for t in req.tools] if req.tool_choice != "none" else []
    name = forced_tool(req.tool_choice)
    if name:
        tools = [t for t in tools if (t.get("function") or {}).get("name") == name]
    if tools:
        body["tools"] = tools
    if req.response_format is not None:
        body["format"] = req.response_format.schema
    if req.reasoning is not None:
        body["think"] = reasoning_effort(req.reasoning)


class NDJSONParser(StreamParser):
    def __init__(self) -> None:
        self._lines = LineSplitter()
        self._model_seen = False
        self._done = False
        self._calls = 0  # Ollama sends whole calls: each one is the next index

    def feed(self, data: bytes) -> list[Event]:
        out: list[Event] = []
        for line in self._lines.feed(data):
            self._on_line(line, out)
        return out

    def close(self) -> list[Event]:
        out: list[Event] = []
        try:
            for line in self._lines.close():
                self._on_line(line, out)
        except ProtocolViolation:
            pass  # a tail cut mid-line is a cut-off body: the missing terminal reports `truncated`
        return out

    def _on_line(self, line: str, out: list[Event]) -> None:
        if self._done or not line.strip():
            return
        obj = loads_json(line, "line")
        if not isinstance(obj, dict):
            return
        if obj.get("error"):
            out.append(StreamFailure(ErrorKind.STREAM_ERROR, str(obj["error"])))
            return
        if not self._model_seen and obj.get("model"):
            self._model_seen = True
            out.append(ResponseInfo(model_version=str(obj["model"])))
        message = obj.get("message")
        source = message if isinstance(message, dict) else obj
        _emit(out, TokenKind.REASONING, source.get("thinking"))
        _emit(out, TokenKind.ANSWER, source.get("content") if source is message else obj.get("response"))
        calls = source.get("tool_calls")
        for call in calls if isinstance(calls, list) else ():
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict):
                token = tool_delta(self._calls, fn.get("name"), fn.get("arguments"))
                if token is not None:
                    self._calls += 1
                    out.append(token)
        if obj.get("done") is True:
            self._done = True
            out.append(
                UsageReport(
                    output_tokens=as_int(obj.get("eval_count")), input_tokens=as_int(obj.get("prompt_eval_count"))
                )
            )
            timing = _server_timing(obj)
            if timing:
                out.append(ResponseInfo(server_timing=timing))
            out.append(Finished(str(obj.get("done_reason") or "stop")))


def _emit(out: list[Event], kind: TokenKind, text: Any) -> None:
    if isinstance(text, str) and text:
        out.append(TokenDelta(kind, text))


def _server_timing(obj: Mapping[str, Any]) -> dict[str, float]:
    return {
        name: value / 1e6
        for field, name in _DURATIONS.items()
        if isinstance(value := obj.get(field), int | float) and not isinstance(value, bool)
    }
