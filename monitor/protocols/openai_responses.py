"""`openai-responses`: the OpenAI Responses API (`POST /responses`), SSE.

Every event names its type twice, in `event:` and in the JSON `type`; some
gateways (OpenRouter) send only the JSON, with `: comments` and a final
`data: [DONE]`, so the JSON `type` is what counts.

Tokens: `output_text.delta` and `refusal.delta` are answer text;
`reasoning_summary_text.delta` and `reasoning_text.delta` are reasoning;
`function_call_arguments.delta` and `custom_tool_call_input.delta` are tool
output, and so is a function call's name when `output_item.added` announces
it (generated output, as with OpenAI Chat's `function.name`). Encrypted
reasoning items carry no text and are not tokens; a reasoning model that
shows no summary has its first token on its first visible output.

The terminal is `response.completed` or `response.incomplete` (with the
reason, e.g. max_output_tokens), which also carry the only usage. `[DONE]`
alone is not a terminal: without `response.completed` the answer's end and
usage were never seen, so the stream counts as truncated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from monitor.protocols.base import (
    Event,
    Finished,
    HttpRequest,
    ProbeRequest,
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
from monitor.protocols.features import forced_tool, reasoning_effort, tool_functions, tool_parameters
from monitor.protocols.sse import SSEStreamParser, as_int, loads_json
from monitor.sample import ErrorKind

_DELTA_KINDS = {
    "response.output_text.delta": TokenKind.ANSWER,
    "response.refusal.delta": TokenKind.ANSWER,
    "response.reasoning_summary_text.delta": TokenKind.REASONING,
    "response.reasoning_text.delta": TokenKind.REASONING,
    "response.function_call_arguments.delta": TokenKind.TOOL,
    "response.custom_tool_call_input.delta": TokenKind.TOOL,
}
_TERMINAL = ("response.completed", "response.incomplete")


@register
class OpenAIResponses(WireProtocol):
    name = "openai-responses"
    genai_provider = "openai"  # OpenTelemetry gen_ai.provider.name

    def build_request(self, req: ProbeRequest) -> HttpRequest:
        body: dict[str, Any] = {
            "model": req.model,
            "input": [{"role": m.role, "content": m.content} for m in req.messages],
            "max_output_tokens": req.max_tokens,
            "stream": True,
        }
        _add_features(body, req)
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if req.api_key:
            headers["authorization"] = f"Bearer {req.api_key}"
        headers.update(req.headers)
        return HttpRequest("POST", join_url(req.base_url, "responses"), headers, json_body(body, req.params))

    def new_parser(self) -> StreamParser:
        return ResponsesParser()


def _add_features(body: dict[str, Any], req: ProbeRequest) -> None:
    """Sampling, tools, structured output and reasoning in the Responses API's own shapes."""
    if req.temperature is not None:
        body["temperature"] = req.temperature
    if req.tools:
        body["tools"] = [
            {"type": "function", "name": fn["name"], "parameters": tool_parameters(fn)}
            | ({"description": fn["description"]} if fn.get("description") else {})
            for fn in tool_functions(req.tools)
        ]
    if req.tool_choice is not None:
        name = forced_tool(req.tool_choice)
        body["tool_choice"] = {"type": "function", "name": name} if name else req.tool_choice
    if req.response_format is not None:
        fmt = req.response_format
        body["text"] = {"format": {"type": "json_schema", "name": fmt.name, "schema": fmt.schema, "strict": fmt.strict}}
    if req.reasoning is not None:
        body["reasoning"] = {"effort": reasoning_effort(req.reasoning)}


class ResponsesParser(SSEStreamParser):
    def __init__(self) -> None:
        super().__init__()
        self._model_seen = False
        self._done = False
        self._calls: dict[Any, int] = {}  # item id / output index -> tool-call index

    def _call_index(self, payload: Mapping[str, Any], item: Any = None) -> int:
        key = payload.get("item_id") or (item.get("id") if isinstance(item, dict) else None)
        key = key if key is not None else payload.get("output_index")
        return self._calls.setdefault(key, len(self._calls))

    def _on_event(self, name: str, data: str, out: list[Event]) -> None:
        if self._done:
            return
        if data.strip() == "[DONE]":
            self._done = True
            return
        payload = loads_json(data, f"{name or 'message'} event")
        if not isinstance(payload, dict):
            return
        kind = payload.get("type")
        kind = kind if isinstance(kind, str) else name
        token_kind = _DELTA_KINDS.get(kind)
        if token_kind is not None:
            delta = payload.get("delta")
            if isinstance(delta, str) and delta:
                if token_kind is TokenKind.TOOL:
                    out.append(tool_delta(self._call_index(payload), "", delta))
                else:
                    out.append(TokenDelta(token_kind, delta))
            return
        if kind == "response.output_item.added":
            item = payload.get("item")
            if isinstance(item, dict) and item.get("type") == "function_call" and item.get("name"):
                out.append(tool_delta(self._call_index(payload, item), str(item["name"]), item.get("arguments")))
            return
        response = payload.get("response")
        if isinstance(response, dict):
            self._on_response(kind, response, out)
        elif kind == "error":
            out.append(_failure(payload.get("error") if isinstance(payload.get("error"), dict) else payload))

    def _on_response(self, kind: str, response: Mapping[str, Any], out: list[Event]) -> None:
        if not self._model_seen and response.get("model"):
            self._model_seen = True
            response_id = response.get("id")  # resp_… (OpenRouter: gen-…), in every snapshot
            response_id = response_id if isinstance(response_id, str) and response_id else None
            out.append(ResponseInfo(model_version=str(response["model"]), response_id=response_id))
        if kind not in (*_TERMINAL, "response.failed"):
            return  # created / in_progress: snapshots without new output
        usage = response.get("usage")
        if isinstance(usage, dict):
            out.append(usage_report(usage))
        if kind == "response.failed":
            error = response.get("error")
            out.append(_failure(error if isinstance(error, dict) else {"message": "response failed"}))
            return
        self._done = True
        details = response.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        out.append(Finished(str(reason or response.get("status") or kind.rpartition(".")[2])))


def usage_report(usage: Mapping[str, Any]) -> UsageReport:
    # output_tokens already includes reasoning tokens; input_tokens includes cached ones.
    out_details = usage.get("output_tokens_details")
    in_details = usage.get("input_tokens_details")
    return UsageReport(
        output_tokens=as_int(usage.get("output_tokens")),
        input_tokens=as_int(usage.get("input_tokens")),
        reasoning_tokens=as_int(out_details.get("reasoning_tokens")) if isinstance(out_details, dict) else None,
        cache_read_tokens=as_int(in_details.get("cached_tokens")) if isinstance(in_details, dict) else None,
    )


def _failure(error: Mapping[str, Any]) -> StreamFailure:
    code = error.get("code") or error.get("type")
    message = error.get("message") or ""
    # A rate limit is the same condition as an HTTP 429, whatever the transport.
    kind = ErrorKind.RATE_LIMITED if "rate_limit" in str(code or "") else ErrorKind.STREAM_ERROR
    return StreamFailure(kind, f"{code}: {message}" if code else str(message))
