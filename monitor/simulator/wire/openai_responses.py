"""`openai-responses`: `POST /v1/responses`, typed SSE events with `sequence_number`.

created → in_progress → [reasoning item: summary part, `reasoning_summary_text.delta`…,
done events] → message item → content part → `output_text.delta`… → done events →
`response.completed` (or `response.incomplete` when `max_output_tokens` cut it),
whose usage carries `output_tokens_details.reasoning_tokens`.
"""

from __future__ import annotations

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
    optional_int,
    prompt_chars,
    prompt_text,
)
from monitor.simulator.wire.openai_chat import OpenAIChatEncoder

# Shared by every request; the item id and output index are bound per stream.
_REASONING_DELTA = Template(
    {
        "type": "response.reasoning_summary_text.delta",
        "sequence_number": hole("seq"),
        "item_id": hole("item_id"),
        "output_index": 0,
        "summary_index": 0,
        "delta": hole("text"),
    }
)
_ANSWER_DELTA = Template(
    {
        "type": "response.output_text.delta",
        "sequence_number": hole("seq"),
        "item_id": hole("item_id"),
        "output_index": hole("output_index"),
        "content_index": 0,
        "delta": hole("text"),
    }
)


def _answer(body: dict[str, Any]):
    tools = [(t["name"], t.get("parameters")) for t in body.get("tools") or () if isinstance(t, dict) and t.get("name")]
    mode, forced = choice_of(body.get("tool_choice"))
    fmt = (body.get("text") or {}).get("format") if isinstance(body.get("text"), dict) else None
    return scripted(tools, mode, fmt.get("schema") if isinstance(fmt, dict) else None, forced)


class OpenAIResponsesEncoder(SSEEncoder):
    protocol = "openai-responses"
    base_path = "/v1"

    @classmethod
    def route(cls, method: str, path: str) -> dict[str, str] | None:
        return {} if path == "/v1/responses" else None

    @classmethod
    def read_call(cls, req: Request, params: Mapping[str, str]) -> Call:
        body = body_object(req)
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise HttpError(400, "Missing required parameter: 'model'.")
        if body.get("stream") is not True:
            raise HttpError(400, "the simulator only streams: set stream to true")
        return Call(
            model=model,
            max_tokens=optional_int(body.get("max_output_tokens"), "max_output_tokens"),
            api_key=bearer(req.headers),
            prompt_chars=prompt_chars(body.get("input")) + prompt_chars(body.get("instructions")),
            prompt_text=prompt_text(body.get("input"), body.get("instructions")),
            answer=_answer(body),
        )

    error_body = OpenAIChatEncoder.error_body

    def __init__(self, info: StreamInfo) -> None:
        super().__init__(info)
        token = info.request_id.removeprefix("req_")
        self._id = f"resp_{token}"
        self._rs_id = f"rs_{token}"
        self._msg_id = f"msg_{token}"
        self._seq = 0
        self._state: str | None = None  # None, "reasoning" or "answer"
        self._reasoning: list[str] = []
        self._answer: list[str] = []
        self._answer_index = 0
        self._reasoning_delta = _REASONING_DELTA.bind(item_id=self._rs_id)
        self._answer_delta: Template | None = None
        self._tool: dict[str, Any] = {}

    def _event(self, payload: dict[str, Any]) -> bytes:
        payload["sequence_number"] = self._seq
        self._seq += 1
        return self.sse(dumps(payload), payload["type"])

    def _response(self, status: str, outcome: Outcome | None = None) -> dict[str, Any]:
        output: list[dict[str, Any]] = []
        if outcome is not None:
            if self._reasoning:
                output.append(self._reasoning_item())
            output.append({**self._tool, "status": "completed"} if self._tool else self._message_item("completed"))
        usage = None
        if outcome is not None and self.info.usage:
            usage = {
                "input_tokens": self.info.prompt_tokens,
                "input_tokens_details": {"cached_tokens": self.info.cache_read_tokens},
                "output_tokens": outcome.output_tokens,
                "output_tokens_details": {"reasoning_tokens": outcome.reasoning_tokens},
                "total_tokens": self.info.prompt_tokens + outcome.output_tokens,
            }
        incomplete = {"reason": "max_output_tokens"} if status == "incomplete" else None
        return {
            "id": self._id,
            "object": "response",
            "created_at": self.info.created_s,
            "status": status,
            "error": None,
            "incomplete_details": incomplete,
            "model": self.info.model,
            "output": output,
            "usage": usage,
        }

    def _reasoning_item(self) -> dict[str, Any]:
        summary = [{"type": "summary_text", "text": "".join(self._reasoning)}]
        return {"id": self._rs_id, "type": "reasoning", "summary": summary}

    def _message_item(self, status: str) -> dict[str, Any]:
        content = [] if status == "in_progress" else [self._text_part("".join(self._answer))]
        return {"id": self._msg_id, "type": "message", "status": status, "role": "assistant", "content": content}

    @staticmethod
    def _text_part(text: str) -> dict[str, Any]:
        return {"type": "output_text", "annotations": [], "text": text}

    def open(self) -> bytes:
        return self._event({"type": "response.created", "response": self._response("in_progress")}) + self._event(
            {"type": "response.in_progress", "response": self._response("in_progress")}
        )

    def _start_reasoning(self) -> bytes:
        self._state = "reasoning"
        item = {"id": self._rs_id, "type": "reasoning", "summary": []}
        part = {"type": "summary_text", "text": ""}
        common = {"item_id": self._rs_id, "output_index": 0, "summary_index": 0}
        return self._event({"type": "response.output_item.added", "output_index": 0, "item": item}) + self._event(
            {"type": "response.reasoning_summary_part.added", **common, "part": part}
        )

    def _end_reasoning(self) -> bytes:
        text = "".join(self._reasoning)
        common = {"item_id": self._rs_id, "output_index": 0, "summary_index": 0}
        return (
            self._event({"type": "response.reasoning_summary_text.done", **common, "text": text})
            + self._event(
                {
                    "type": "response.reasoning_summary_part.done",
                    **common,
                    "part": {"type": "summary_text", "text": text},
                }
            )
            + self._event({"type": "response.output_item.done", "output_index": 0, "item": self._reasoning_item()})
        )

    def _start_answer(self) -> bytes:
        out = self._end_reasoning() if self._state == "reasoning" else b""
        self._state = "answer"
        self._answer_index = 1 if self._reasoning else 0
        index = self._answer_index
        common = {"item_id": self._msg_id, "output_index": index, "content_index": 0}
        self._answer_delta = _ANSWER_DELTA.bind(item_id=self._msg_id, output_index=index)
        item = self._message_item("in_progress")
        return (
            out
            + self._event({"type": "response.output_item.added", "output_index": index, "item": item})
            + self._event({"type": "response.content_part.added", **common, "part": self._text_part("")})
        )

    def delta(self, reasoning: bool, text: str, tokens: int = 1) -> bytes:
        out = b""
        if reasoning:
            if self._state is None:
                out = self._start_reasoning()
            self._reasoning.append(text)
            template, event = self._reasoning_delta, "response.reasoning_summary_text.delta"
        else:
            if self._state != "answer":
                out = self._start_answer()
            self._answer.append(text)
            template, event = self._answer_delta, "response.output_text.delta"
        assert template is not None
        payload = template.render(seq=self._seq, text=text)
        self._seq += 1
        return out + self.sse(payload, event)

    def tool_delta(self, name: str, arguments: str, first: bool) -> bytes:
        out = b""
        if first:
            out = self._end_reasoning() if self._state == "reasoning" else b""
            self._state = "tool"
            self._answer_index = 1 if self._reasoning else 0
            self._tool = {"id": "fc_" + self._msg_id[4:], "type": "function_call", "call_id": "call_" + self._id[5:]}
            self._tool.update(name=name, arguments="", status="in_progress")
            item = dict(self._tool)
            out += self._event({"type": "response.output_item.added", "output_index": self._answer_index, "item": item})
        self._tool["arguments"] += arguments
        common = {"item_id": self._tool["id"], "output_index": self._answer_index}
        return out + self._event({"type": "response.function_call_arguments.delta", **common, "delta": arguments})

    def close(self, outcome: Outcome) -> bytes:
        if self._state == "tool":
            common = {"item_id": self._tool["id"], "output_index": self._answer_index}
            done = {**self._tool, "status": "completed"}
            out = self._event(
                {"type": "response.function_call_arguments.done", **common, "arguments": done["arguments"]}
            )
            out += self._event({"type": "response.output_item.done", "output_index": self._answer_index, "item": done})
            status = "incomplete" if outcome.finish == "length" else "completed"
            return out + self._event({"type": f"response.{status}", "response": self._response(status, outcome)})
        out = self._start_answer() if self._state != "answer" else b""
        text = "".join(self._answer)
        common = {"item_id": self._msg_id, "output_index": self._answer_index, "content_index": 0}
        out += self._event({"type": "response.output_text.done", **common, "text": text})
        out += self._event({"type": "response.content_part.done", **common, "part": self._text_part(text)})
        out += self._event(
            {
                "type": "response.output_item.done",
                "output_index": self._answer_index,
                "item": self._message_item("completed"),
            }
        )
        status = "incomplete" if outcome.finish == "length" else "completed"
        return out + self._event({"type": f"response.{status}", "response": self._response(status, outcome)})

    def stream_error(self, throttle: bool) -> bytes:
        code = "rate_limit_exceeded" if throttle else "server_error"
        message = (
            "Rate limit reached for requests. Please try again in 2s."
            if throttle
            else "The server had an error while processing your request. Sorry about that!"
        )
        failed = self._response("failed")
        failed["error"] = {"code": code, "message": message}
        return self._event({"type": "error", "code": code, "message": message, "param": None}) + self._event(
            {"type": "response.failed", "response": failed}
        )

    def malformed(self) -> bytes:
        payload = b'{"type":"response.output_text.delta","sequence_number":%d,"delta":"' % self._seq
        return self.sse(payload, "response.output_text.delta")
