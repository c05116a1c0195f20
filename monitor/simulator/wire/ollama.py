"""`ollama`: `POST /api/chat`, NDJSON.

One `{"model","created_at","message":{…},"done":false}` line per chunk
(reasoning in `message.thinking`, as Ollama ≥ 0.9 streams it), then a final
line with `done_reason`, `done: true` and nanosecond durations that match
what the simulator really did: prompt evaluation is the time to first token,
evaluation the time from the first to the last token.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from monitor.simulator.answers import openai_tools, scripted
from monitor.simulator.request import HttpError, Request
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
    optional_int,
    prompt_chars,
    prompt_text,
)

_LOAD_NS_MAX = 20_000_000  # a warm model: a few ms of the time to first token are "load"


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


@functools.lru_cache(maxsize=1024)
def _line_templates(model: str) -> tuple[Template, Template]:
    """(answer, thinking) lines per model, shared by every request of it."""
    return tuple(  # type: ignore[return-value]
        Template(
            {
                "model": model,
                "created_at": hole("at"),
                "message": {"role": "assistant", "content": "", "thinking": hole("text")}
                if reasoning
                else {"role": "assistant", "content": hole("text")},
                "done": False,
            }
        )
        for reasoning in (False, True)
    )


class OllamaEncoder(WireEncoder):
    protocol = "ollama"
    content_type = "application/x-ndjson"
    whole_tool_calls = True

    @classmethod
    def route(cls, method: str, path: str) -> dict[str, str] | None:
        return {} if path == "/api/chat" else None

    @classmethod
    def read_call(cls, req: Request, params: Mapping[str, str]) -> Call:
        body = body_object(req)
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise HttpError(400, "model is required")
        if body.get("stream", True) is not True:  # Ollama streams unless told not to
            raise HttpError(400, "the simulator only streams: leave stream unset or true")
        options = body.get("options") or {}
        if not isinstance(options, dict):
            raise HttpError(400, "options must be an object")
        return Call(
            model=model,
            max_tokens=optional_int(options.get("num_predict"), "options.num_predict"),
            api_key=bearer(req.headers),
            verify_key=False,  # Ollama has no authentication of its own
            prompt_chars=prompt_chars(body.get("messages")),
            prompt_text=prompt_text(body.get("messages")),
            # /api/chat has no tool_choice: a model given tools calls the first one
            answer=scripted(openai_tools(body.get("tools")), None, body.get("format")),
        )

    @classmethod
    def error_body(cls, status: int, kind: str, message: str, request_id: str) -> tuple[bytes, list[tuple[str, str]]]:
        return dumps({"error": message}), []

    def __init__(self, info: StreamInfo) -> None:
        super().__init__(info)
        self._line = _line_templates(info.model)

    def _ndjson(self, data: bytes) -> bytes:
        return self.payload(data) + b"\n"

    def delta(self, reasoning: bool, text: str, tokens: int = 1) -> bytes:
        return self._ndjson(self._line[reasoning].render(at=_now_iso(), text=text))

    def tool_delta(self, name: str, arguments: str, first: bool) -> bytes:
        try:
            args = json.loads(arguments)
        except ValueError:  # cut by max_tokens
            args = {}
        message = {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": name, "arguments": args}}]}
        return self._ndjson(
            dumps({"model": self.info.model, "created_at": _now_iso(), "message": message, "done": False})
        )

    def close(self, outcome: Outcome) -> bytes:
        first = outcome.first_token_ns if outcome.first_token_ns is not None else outcome.end_ns
        last = outcome.last_token_ns if outcome.last_token_ns is not None else first
        ttft_ns = first - outcome.arrival_ns
        load_ns = min(_LOAD_NS_MAX, ttft_ns // 10)
        final: dict[str, Any] = {
            "model": self.info.model,
            "created_at": _now_iso(),
            "message": {"role": "assistant", "content": ""},
            "done_reason": "length" if outcome.finish == "length" else "stop",
            "done": True,
            "total_duration": outcome.end_ns - outcome.arrival_ns,
            "load_duration": load_ns,
        }
        if self.info.usage:
            # Ollama counts only the prompt it evaluated: a reused prefix is left out, unstated.
            final["prompt_eval_count"] = max(0, self.info.prompt_tokens - self.info.cache_read_tokens)
        final["prompt_eval_duration"] = ttft_ns - load_ns
        if self.info.usage:
            final["eval_count"] = outcome.output_tokens
        final["eval_duration"] = last - first
        return self._ndjson(dumps(final))

    def stream_error(self, throttle: bool) -> bytes:
        message = (
            "server busy, please try again. maximum pending requests exceeded"
            if throttle
            else "model runner has unexpectedly stopped"
        )
        return self._ndjson(dumps({"error": message}))

    def malformed(self) -> bytes:
        return self._ndjson(b'{"model":"' + self.info.model.encode() + b'","message":{"role":"assistant","content":"')
