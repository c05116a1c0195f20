"""`gemini`: `…/models/{model}:streamGenerateContent`, Gemini API and Vertex AI.

With `alt=sse`: `data:` events separated by CRLF CRLF, no `[DONE]`. Without
it: one JSON array streamed element by element (`[{…}\\r\\n,\\r\\n{…}]`,
application/json), as the recorded gemini-flash-latest stream. Every chunk
carries cumulative `usageMetadata`; reasoning parts have `"thought": true`;
the last chunk has `finishReason`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from monitor.simulator.answers import scripted
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

_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}
_METHOD = ":streamGenerateContent"


def _model_path(path: str) -> dict[str, str] | None:
    """`/v1beta/models/M:…` (Gemini API) or `/v1/projects/P/locations/L/publishers/google/models/M:…` (Vertex)."""
    if not path.endswith(_METHOD):
        return None
    parts = path[: -len(_METHOD)].split("/")
    # ['', version, 'models', model] or ['', version, 'projects', p, 'locations', l, 'publishers', 'google', 'models', model]
    if len(parts) == 4 and parts[2] == "models" and parts[3]:
        return {"model": unquote(parts[3])}
    if len(parts) == 10 and parts[2] == "projects" and parts[4] == "locations" and parts[8] == "models" and parts[9]:
        return {"model": unquote(parts[9]), "location": unquote(parts[5])}
    return None


@functools.lru_cache(maxsize=4096)
def _chunk_template(
    model: str, usage: bool, thought: bool, finish: str | None, cand: bool, thoughts: bool, cached: bool = False
) -> Template:
    """One chunk shape; shared per model. Usage omits zero counts, as Gemini's early chunks do."""
    part: dict[str, Any] = {"text": hole("text")}
    if thought:
        part["thought"] = True
    candidate: dict[str, Any] = {"content": {"parts": [part], "role": "model"}}
    if finish:
        candidate["finishReason"] = finish
    candidate["index"] = 0
    chunk: dict[str, Any] = {"candidates": [candidate]}
    if usage:
        metadata: dict[str, Any] = {"promptTokenCount": hole("prompt")}
        if cand:
            metadata["candidatesTokenCount"] = hole("cand")
        metadata["totalTokenCount"] = hole("total")
        if thoughts:
            metadata["thoughtsTokenCount"] = hole("thoughts")
        if cached:  # part of promptTokenCount, stated only when the implicit cache hit
            metadata["cachedContentTokenCount"] = hole("cached")
        chunk["usageMetadata"] = metadata
    chunk["modelVersion"] = model
    chunk["responseId"] = hole("rid")
    return Template(chunk)


_MODES = {"AUTO": "auto", "NONE": "none", "ANY": "required"}


def _answer(body: dict[str, Any], config: dict[str, Any]):
    tools = [
        (d["name"], d.get("parameters") or d.get("parametersJsonSchema"))
        for t in body.get("tools") or ()
        if isinstance(t, dict)
        for d in t.get("functionDeclarations") or ()
        if isinstance(d, dict) and d.get("name")
    ]
    calling = ((body.get("toolConfig") or {}).get("functionCallingConfig") or {}) if tools else {}
    allowed = calling.get("allowedFunctionNames") or [None]
    schema = config.get("responseSchema") or config.get("responseJsonSchema")
    return scripted(tools, _MODES.get(str(calling.get("mode"))), schema, allowed[0])


class GeminiEncoder(SSEEncoder):
    protocol = "gemini"
    separator = b"\r\n\r\n"
    whole_tool_calls = True

    @classmethod
    def route(cls, method: str, path: str) -> dict[str, str] | None:
        return _model_path(path)

    @classmethod
    def read_call(cls, req: Request, params: Mapping[str, str]) -> Call:
        body = body_object(req)
        config = body.get("generationConfig") or {}
        if not isinstance(config, dict):
            raise HttpError(400, "generationConfig must be an object")
        key = req.headers.get("x-goog-api-key") or req.query.get("key")
        if key is None:  # Vertex AI: an OAuth bearer token
            key = bearer(req.headers)
        location = params.get("location")
        return Call(
            model=params["model"],
            max_tokens=optional_int(config.get("maxOutputTokens"), "generationConfig.maxOutputTokens"),
            api_key=key,
            prompt_chars=prompt_chars(body.get("contents")) + prompt_chars(body.get("systemInstruction")),
            prompt_text=prompt_text(body.get("contents"), body.get("systemInstruction")),
            answer=_answer(body, config),
            region=location if location and location != "global" else None,
            options={"sse": req.query.get("alt") == "sse"},
        )

    @classmethod
    def error_body(cls, status: int, kind: str, message: str, request_id: str) -> tuple[bytes, list[tuple[str, str]]]:
        return dumps({"error": {"code": status, "message": message, "status": _STATUS.get(status, "UNKNOWN")}}), []

    def media_type(self) -> str:
        return "text/event-stream" if self._sse else "application/json; charset=UTF-8"

    def __init__(self, info: StreamInfo) -> None:
        super().__init__(info)
        self._sse = bool(info.options.get("sse", True))
        self._elements = 0
        self._thoughts = 0
        self._candidates = 0
        self._response_id = info.request_id.removeprefix("req_")
        self._templates: dict[tuple[bool, str | None, bool, bool], Template] = {}

    def _element(self, data: bytes) -> bytes:
        if self._sse:
            return self.sse(data)
        prefix = b"[" if self._elements == 0 else b"\r\n,\r\n"
        self._elements += 1
        return prefix + self.payload(data)

    def _chunk(self, text: str, thought: bool, finish: str | None = None) -> bytes:
        key = (thought, finish, self._candidates > 0, self._thoughts > 0)
        template = self._templates.get(key)
        if template is None:
            cached = self.info.cache_read_tokens
            template = self._templates[key] = _chunk_template(self.info.model, self.info.usage, *key, cached > 0).bind(
                rid=self._response_id, prompt=self.info.prompt_tokens, **({"cached": cached} if cached else {})
            )
        total = self.info.prompt_tokens + self._candidates + self._thoughts
        return self._element(template.render(text=text, cand=self._candidates, thoughts=self._thoughts, total=total))

    def delta(self, reasoning: bool, text: str, tokens: int = 1) -> bytes:
        if reasoning:
            self._thoughts += tokens
        else:
            self._candidates += tokens
        return self._chunk(text, reasoning)

    def tool_delta(self, name: str, arguments: str, first: bool) -> bytes:
        part = {"functionCall": {"name": name, "args": _json_or_empty(arguments)}}
        chunk = {"candidates": [{"content": {"parts": [part], "role": "model"}, "index": 0}]}
        return self._element(dumps({**chunk, "modelVersion": self.info.model, "responseId": self._response_id}))

    def close(self, outcome: Outcome) -> bytes:
        self._thoughts, self._candidates = outcome.reasoning_tokens, outcome.answer_tokens
        out = self._chunk("", False, finish="MAX_TOKENS" if outcome.finish == "length" else "STOP")
        return out if self._sse else out + b"]"

    def stream_error(self, throttle: bool) -> bytes:
        if throttle:
            error = {
                "code": 429,
                "message": "Resource has been exhausted (e.g. check quota).",
                "status": "RESOURCE_EXHAUSTED",
            }
        else:
            error = {
                "code": 503,
                "message": "The model is overloaded. Please try again later.",
                "status": "UNAVAILABLE",
            }
        out = self._element(dumps({"error": error}))
        return out if self._sse else out + b"]"

    def malformed(self) -> bytes:
        return self._element(b'{"candidates": [{"content": {"parts": [{"text": "')


def _json_or_empty(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:  # cut by max_tokens: a whole-call protocol would not send it half
        return {}
