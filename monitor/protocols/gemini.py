"""`gemini`: Google Gemini `streamGenerateContent`, on AI Studio or Vertex AI.

Two wire shapes carry the same `GenerateContentResponse` objects: SSE with
`?alt=sse` (what the probe asks for; CRLF between events) and, without it, a
JSON array streamed element by element (`[{…}\\r\\n,\\r\\n{…}]`, content type
application/json). The parser tells them apart by the first byte, so a proxy
that drops `alt=sse` still measures.

Tokens: text parts are answer text, or reasoning when `thought: true`;
`functionCall` and `executableCode` parts are TOOL output (a whole call
arrives in one part). `thoughtSignature` is opaque, and an empty text part
carrying only a signature is not a token.

`usageMetadata` is cumulative and rides on many chunks: each report replaces
the previous one, never adds. Output = candidates + thoughts, because
`candidatesTokenCount` excludes thinking.

There is no `[DONE]`: the terminal is the last event carrying a
`finishReason` — the event after which every candidate seen has finished.
A probe asks for one candidate, so that is its single finishReason event; a
trailing usage-only event does not move it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

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
    error_message_from_body,
    join_url,
    json_body,
    register,
    tool_delta,
)
from monitor.protocols.features import forced_tool, reasoning_budget, tool_functions, tool_parameters
from monitor.protocols.json_array import MAX_ELEMENT_BYTES, WHITESPACE, JsonArraySplitter
from monitor.protocols.sse import SSEDecoder, as_int, loads_json
from monitor.sample import ErrorKind


@register
class Gemini(WireProtocol):
    name = "gemini"
    genai_provider = "gcp.gemini"  # OpenTelemetry gen_ai.provider.name
    genai_operation = "generate_content"
    content_types = ("text/event-stream", "application/json")
    request_id_headers = ("x-goog-request-id", "x-request-id")

    def build_request(self, req: ProbeRequest) -> HttpRequest:
        model = quote(req.model, safe="")
        method = f"models/{model}:streamGenerateContent?alt=sse"
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        vertex = req.options.get("vertex")
        if isinstance(vertex, Mapping):
            project, location = quote(str(vertex["project"]), safe=""), quote(str(vertex["location"]), safe="")
            path = f"v1/projects/{project}/locations/{location}/publishers/google/{method}"
            if req.api_key:  # an OAuth access token, e.g. from `gcloud auth print-access-token`
                headers["authorization"] = f"Bearer {req.api_key}"
        else:
            path = f"v1beta/{method}"
            if req.api_key:
                headers["x-goog-api-key"] = req.api_key
        headers.update(req.headers)
        return HttpRequest("POST", join_url(req.base_url, path), headers, json_body(_body(req), req.params))

    def new_parser(self) -> StreamParser:
        return GenerateContentParser()

    def config_errors(self, options: Mapping[str, Any], has_api_key: bool) -> list[str]:
        vertex = options.get("vertex")
        if vertex is None:
            return []
        if not isinstance(vertex, Mapping):
            return ["options.vertex: must be a mapping with project and location"]
        return [
            f"options.vertex.{key}: required, a non-empty string"
            for key in ("project", "location")
            if not isinstance(vertex.get(key), str) or not vertex.get(key)
        ]

    def error_message(self, status: int, body: bytes) -> str:
        # {"error": {"code": 429, "message": "...", "status": "RESOURCE_EXHAUSTED"}}, or that in a list
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        if isinstance(data, list) and data:
            data = data[0]
        error = data.get("error") if isinstance(data, dict) else None
        if isinstance(error, dict) and error.get("message"):
            return f"HTTP {status}: {_error_text(error)}"
        return error_message_from_body(status, body)


def _body(req: ProbeRequest) -> dict[str, Any]:
    system = "\n\n".join(m.content for m in req.messages if m.role == "system")
    body: dict[str, Any] = {
        "contents": [
            {"role": "model" if m.role == "assistant" else "user", "parts": [{"text": m.content}]}
            for m in req.messages
            if m.role != "system"
        ],
        "generationConfig": {"maxOutputTokens": req.max_tokens},
    }
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    _add_features(body, req)
    return body


_CALLING_MODE = {"auto": "AUTO", "none": "NONE", "required": "ANY"}


def _add_features(body: dict[str, Any], req: ProbeRequest) -> None:
    """Sampling, function declarations, `responseSchema` and `thinkingConfig` (generationConfig)."""
    config = body["generationConfig"]
    if req.temperature is not None:
        config["temperature"] = req.temperature
    if req.tools:
        body["tools"] = [
            {
                "functionDeclarations": [
                    {"name": fn["name"], "parameters": tool_parameters(fn)}
                    | ({"description": fn["description"]} if fn.get("description") else {})
                    for fn in tool_functions(req.tools)
                ]
            }
        ]
    if req.tool_choice is not None:
        name = forced_tool(req.tool_choice)
        calling: dict[str, Any] = {"mode": "ANY" if name else _CALLING_MODE[str(req.tool_choice)]}
        if name:
            calling["allowedFunctionNames"] = [name]
        body["toolConfig"] = {"functionCallingConfig": calling}
    if req.response_format is not None:
        config["responseMimeType"] = "application/json"
        config["responseSchema"] = req.response_format.schema
    if req.reasoning is not None:
        # thinkingBudget is a token count; an effort maps through features.EFFORT_BUDGET_TOKENS.
        config["thinkingConfig"] = {"thinkingBudget": reasoning_budget(req.reasoning)}


class GenerateContentParser(StreamParser):
    def __init__(self) -> None:
        self._framing: SSEDecoder | JsonArraySplitter | None = None
        self._head = b""
        self._model_seen = False
        self._id_seen = False
        self._open: set[int] = set()  # candidate indexes seen without a finishReason yet
        self._reason: str | None = None
        self._finished = False
        self._calls = 0  # a functionCall part is a whole call: each one is the next index

    def feed(self, data: bytes) -> list[Event]:
        if self._framing is None:
            data = self._head + data
            start = data.lstrip(WHITESPACE)
            if not start:
                if len(data) > MAX_ELEMENT_BYTES:
                    raise ProtocolViolation("only whitespace before the stream")
                self._head = data
                return []
            self._head = b""
            self._framing = JsonArraySplitter() if start[:1] == b"[" else SSEDecoder()
        out: list[Event] = []
        for item in self._framing.feed(data):
            self._on_item(item, out)
        return out

    def close(self) -> list[Event]:
        out: list[Event] = []
        try:
            for item in self._framing.close() if self._framing is not None else ():
                self._on_item(item, out)
        except ProtocolViolation:
            pass  # a tail cut mid-event is a cut-off body: the missing terminal reports `truncated`
        return out

    def _on_item(self, item: Any, out: list[Event]) -> None:
        if not isinstance(item, str):  # an SSEEvent
            if item.data.strip() == "[DONE]":
                return
            item = item.data
        self._on_chunk(loads_json(item, "chunk"), out)

    def _on_chunk(self, chunk: Any, out: list[Event]) -> None:
        if not isinstance(chunk, dict):
            return
        if not self._model_seen and chunk.get("modelVersion"):
            self._model_seen = True
            out.append(ResponseInfo(model_version=str(chunk["modelVersion"])))
        if not self._id_seen and isinstance(chunk.get("responseId"), str) and chunk["responseId"]:
            # The only id a Gemini response carries (AI Studio sends no request-id header).
            self._id_seen = True
            out.append(ResponseInfo(response_id=chunk["responseId"]))
        finished_now = False
        for position, candidate in enumerate(_list(chunk.get("candidates"))):
            if not isinstance(candidate, dict):
                continue
            index = as_int(candidate.get("index"))
            index = position if index is None else index
            content = candidate.get("content")
            if isinstance(content, dict):
                for part in _list(content.get("parts")):
                    if isinstance(part, dict):
                        self._on_part(part, out)
            if candidate.get("finishReason"):
                self._reason = str(candidate["finishReason"])
                self._open.discard(index)
                finished_now = True
            else:
                self._open.add(index)
        usage = chunk.get("usageMetadata")
        if isinstance(usage, dict):
            out.append(_usage(usage))
        error = chunk.get("error")
        if error:
            error = error if isinstance(error, dict) else {"message": str(error)}
            # A rate limit is the same condition as an HTTP 429, whatever the transport.
            limited = error.get("code") == 429 or error.get("status") == "RESOURCE_EXHAUSTED"
            out.append(StreamFailure(ErrorKind.RATE_LIMITED if limited else ErrorKind.STREAM_ERROR, _error_text(error)))
        feedback = chunk.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason") and not chunk.get("candidates"):
            # The prompt was refused: the answer is over, with nothing in it.
            self._reason = f"prompt blocked: {feedback['blockReason']}"
            finished_now = True
        if finished_now and not self._open and not self._finished:
            self._finished = True
            out.append(Finished(self._reason))

    def _on_part(self, part: Mapping[str, Any], out: list[Event]) -> None:
        text = part.get("text")
        if isinstance(text, str) and text:
            out.append(TokenDelta(TokenKind.REASONING if part.get("thought") else TokenKind.ANSWER, text))
        call = part.get("functionCall")
        if isinstance(call, dict):
            # A whole function call as one TOOL token: its name and its JSON arguments.
            token = tool_delta(self._calls, call.get("name"), call.get("args"))
            if token is not None:
                self._calls += 1
                out.append(token)
        code = part.get("executableCode")
        if isinstance(code, dict) and isinstance(code.get("code"), str) and code["code"]:
            out.append(TokenDelta(TokenKind.TOOL, code["code"]))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _usage(usage: Mapping[str, Any]) -> UsageReport:
    candidates = as_int(usage.get("candidatesTokenCount"))
    thoughts = as_int(usage.get("thoughtsTokenCount"))
    output = None if candidates is None and thoughts is None else (candidates or 0) + (thoughts or 0)
    return UsageReport(
        output_tokens=output,
        input_tokens=as_int(usage.get("promptTokenCount")),
        reasoning_tokens=thoughts,
        # Part of promptTokenCount already; Gemini states no cache writes (implicit caching bills none).
        cache_read_tokens=as_int(usage.get("cachedContentTokenCount")),
    )


def _error_text(error: Mapping[str, Any]) -> str:
    status, message = error.get("status") or error.get("code"), error.get("message") or ""
    return f"{status}: {message}" if status else str(message)
