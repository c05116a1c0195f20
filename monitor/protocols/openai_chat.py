"""`openai-chat`: OpenAI Chat Completions SSE and every compatible host.

Covers api.openai.com, Groq, Together, Fireworks, DeepSeek, Mistral,
OpenRouter, vLLM, llama.cpp and LM Studio. Their differences live in the
chunks, not the framing: reasoning arrives as `reasoning_content` (DeepSeek,
z.ai), `reasoning` (Groq, OpenRouter), typed content parts (Mistral) or
inline `<think>` tags (DeepSeek-R1 on Together); usage arrives on the last
chunk, on the finish chunk or after it; provider timings ride along as
`x_groq.usage`, llama.cpp `timings` or `sla_metrics`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

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
from monitor.protocols.features import forced_tool, reasoning_effort
from monitor.protocols.route import openrouter_pin
from monitor.protocols.sse import SSEStreamParser, as_int, loads_json
from monitor.sample import ErrorKind

_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"


def chat_body(req: ProbeRequest, max_tokens_field: str, include_usage: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": req.model,
        "messages": [{"role": m.role, "content": m.content} for m in req.messages],
        max_tokens_field: req.max_tokens,
        "stream": True,
    }
    if include_usage:
        body["stream_options"] = {"include_usage": True}
    if req.temperature is not None:
        body["temperature"] = req.temperature
    if req.tools:
        body["tools"] = [dict(t) for t in req.tools]
    if req.tool_choice is not None:
        name = forced_tool(req.tool_choice)
        body["tool_choice"] = {"type": "function", "function": {"name": name}} if name else req.tool_choice
    if req.response_format is not None:
        fmt = req.response_format
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": fmt.name, "schema": fmt.schema, "strict": fmt.strict},
        }
    if req.reasoning is not None:
        # Chat Completions takes only an effort; a budget maps to the nearest (features.EFFORT_BUDGET_TOKENS).
        body["reasoning_effort"] = reasoning_effort(req.reasoning)
    return body


def _default_max_tokens_field(base_url: str) -> str:
    # OpenAI's own reasoning models reject `max_tokens`; most compatible
    # hosts do not know `max_completion_tokens`. Pick per host, allow override.
    host = urlsplit(base_url).hostname or ""
    return "max_completion_tokens" if host.endswith("openai.com") else "max_tokens"


@register
class OpenAIChat(WireProtocol):
    name = "openai-chat"
    genai_provider = "openai"  # OpenTelemetry gen_ai.provider.name

    def build_request(self, req: ProbeRequest) -> HttpRequest:
        field = req.options.get("max_tokens_field") or _default_max_tokens_field(req.base_url)
        body = chat_body(req, field, bool(req.options.get("include_usage", True)))
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if req.api_key:
            headers["authorization"] = f"Bearer {req.api_key}"
        headers.update(req.headers)
        return HttpRequest("POST", join_url(req.base_url, "chat/completions"), headers, json_body(body, req.params))

    def new_parser(self) -> StreamParser:
        return ChatCompletionsParser()

    def pinned_route(self, params: Mapping[str, Any]) -> str | None:
        return openrouter_pin(params)

    def config_errors(self, options: Mapping[str, Any], has_api_key: bool) -> list[str]:
        errors = []
        field = options.get("max_tokens_field")
        if field is not None and field not in ("max_tokens", "max_completion_tokens"):
            errors.append("options.max_tokens_field: must be max_tokens or max_completion_tokens")
        return errors


class ChatCompletionsParser(SSEStreamParser):
    """Chat-completion chunks to events. Shared with `azure-openai`."""

    def __init__(self) -> None:
        super().__init__()
        self._model_seen = False
        self._provider_seen = False
        self._fingerprint_seen = False
        self._id_seen = False
        self._finish_reason: str | None = None
        self._done = False
        # Inline <think> handling: None = undecided, True = inside, False = answer.
        self._in_think: bool | None = None

    def _on_close(self) -> list[Event]:
        # Some hosts (and some Azure deployments) end the body cleanly after
        # the finish chunk without `[DONE]`: the model did finish.
        if not self._done and self._finish_reason is not None:
            return [Finished(self._finish_reason)]
        return []

    def _on_event(self, name: str, data: str, out: list[Event]) -> None:
        if self._done:
            return
        if data.strip() == "[DONE]":
            self._done = True
            out.append(Finished(self._finish_reason))
            return
        chunk = loads_json(data, "chunk")
        if not isinstance(chunk, dict):
            return
        if not self._model_seen and chunk.get("model"):
            self._model_seen = True
            out.append(ResponseInfo(model_version=str(chunk["model"])))
        if not (self._provider_seen and self._fingerprint_seen):
            self._on_route(chunk, out)
        if not self._id_seen:
            self._on_id(chunk, out)
        for choice in chunk.get("choices") or ():
            if isinstance(choice, dict):
                self._on_choice(choice, out)
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            out.append(usage_report(usage))
        timing = _server_timing(chunk)
        if timing:
            out.append(ResponseInfo(server_timing=timing))
            llamacpp = timing.get("llamacpp") or {}
            if not isinstance(usage, dict) and as_int(llamacpp.get("predicted_n")) is not None:
                # llama.cpp counts its own generated tokens even without usage.
                out.append(llamacpp_usage(llamacpp))
        error = chunk.get("error")
        if error:
            out.append(StreamFailure(_error_kind(error), _error_text(error)))

    def _on_route(self, chunk: dict[str, Any], out: list[Event]) -> None:
        # Route truth rides on every chunk; each field is taken the first time it
        # is non-empty. OpenRouter names the upstream in a top-level `provider`
        # (recorded: openrouter_streaming_reasoning, "Google"); OpenAI-compatible
        # hosts send `system_fingerprint` (OpenAI fp_…, vLLM, llama.cpp build),
        # some as null or "" (gpt-5, Novita), Azure only from its second chunk.
        provider = None if self._provider_seen else _nonempty(chunk.get("provider"))
        fingerprint = None if self._fingerprint_seen else _nonempty(chunk.get("system_fingerprint"))
        if provider or fingerprint:
            self._provider_seen = self._provider_seen or provider is not None
            self._fingerprint_seen = self._fingerprint_seen or fingerprint is not None
            out.append(ResponseInfo(served_by=provider, system_fingerprint=fingerprint))

    def _on_id(self, chunk: dict[str, Any], out: list[Event]) -> None:
        # Every chunk repeats the completion's `id` (chatcmpl-…, OpenRouter gen-…); Azure's
        # first chunk has "" and the next the real one. Groq's first chunk also names its
        # request id (`x_groq.id`, req_…), the one its support looks up.
        response_id = _nonempty(chunk.get("id"))
        groq = chunk.get("x_groq")
        request_id = _nonempty(groq.get("id")) if isinstance(groq, dict) else None
        if response_id or request_id:
            self._id_seen = True
            out.append(ResponseInfo(response_id=response_id, request_id=request_id))

    def _on_choice(self, choice: dict[str, Any], out: list[Event]) -> None:
        delta = choice.get("delta")
        if isinstance(delta, dict):
            for key in ("reasoning_content", "reasoning"):
                text = delta.get(key)
                if isinstance(text, str) and text:
                    out.append(TokenDelta(TokenKind.REASONING, text))
            self._on_content(delta.get("content"), out)
            for position, call in enumerate(delta.get("tool_calls") or ()):
                fn = call.get("function") if isinstance(call, dict) else None
                if isinstance(fn, dict):
                    index = as_int(call.get("index"))
                    token = tool_delta(position if index is None else index, fn.get("name"), fn.get("arguments"))
                    if token is not None:
                        out.append(token)
        elif isinstance(choice.get("text"), str):  # legacy completion-style chunk
            self._on_content(choice["text"], out)
        if choice.get("finish_reason"):
            self._finish_reason = str(choice["finish_reason"])

    def _on_content(self, content: Any, out: list[Event]) -> None:
        if isinstance(content, str):
            if content:
                self._on_text(content, out)
        elif isinstance(content, list):  # Mistral typed parts
            for part in content:
                if not isinstance(part, dict):
                    continue
                if part.get("type") == "thinking":
                    text = "".join(p.get("text", "") for p in part.get("thinking") or () if isinstance(p, dict))
                    if text:
                        out.append(TokenDelta(TokenKind.REASONING, text))
                elif isinstance(part.get("text"), str) and part["text"]:
                    self._on_text(part["text"], out)

    def _on_text(self, text: str, out: list[Event]) -> None:
        if self._in_think is None:
            stripped = text.lstrip()
            if not stripped:  # leading whitespace: still undecided
                out.append(TokenDelta(TokenKind.ANSWER, text))
                return
            self._in_think = stripped.startswith(_THINK_OPEN)
        if self._in_think:
            head, sep, tail = text.partition(_THINK_CLOSE)
            out.append(TokenDelta(TokenKind.REASONING, head + sep))
            if sep:
                self._in_think = False
                if tail:
                    out.append(TokenDelta(TokenKind.ANSWER, tail))
            return
        out.append(TokenDelta(TokenKind.ANSWER, text))


def _nonempty(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def usage_report(usage: Mapping[str, Any]) -> UsageReport:
    # `prompt_tokens` already counts the cached tokens (OpenAI, vLLM, OpenRouter, DeepSeek alike).
    completion = usage.get("completion_tokens_details") or {}
    prompt = usage.get("prompt_tokens_details") or {}
    prompt = prompt if isinstance(prompt, dict) else {}
    cached = as_int(prompt.get("cached_tokens"))
    if cached is None:
        cached = as_int(usage.get("prompt_cache_hit_tokens"))  # DeepSeek
    return UsageReport(
        output_tokens=as_int(usage.get("completion_tokens")),
        input_tokens=as_int(usage.get("prompt_tokens")),
        reasoning_tokens=as_int(completion.get("reasoning_tokens")) if isinstance(completion, dict) else None,
        cache_read_tokens=cached,
        # OpenAI states no cache writes; OpenRouter does when the upstream (Anthropic, Gemini) bills them.
        cache_write_tokens=as_int(prompt.get("cache_write_tokens")),
    )


def llamacpp_usage(timings: Mapping[str, Any]) -> UsageReport:
    """llama.cpp's `timings`: `prompt_n` tokens were evaluated and `cache_n` reused from its
    prompt cache (the KV cache of the slot); the prompt is both."""
    evaluated, reused = as_int(timings.get("prompt_n")), as_int(timings.get("cache_n"))
    return UsageReport(
        output_tokens=as_int(timings.get("predicted_n")),
        input_tokens=None if evaluated is None else evaluated + (reused or 0),
        cache_read_tokens=reused,
    )


def _server_timing(chunk: Mapping[str, Any]) -> dict[str, Any] | None:
    timing: dict[str, Any] = {}
    groq = chunk.get("x_groq")
    if isinstance(groq, dict) and isinstance(groq.get("usage"), dict):
        timing["groq"] = {k: v for k, v in groq["usage"].items() if k.endswith("_time")}
    if isinstance(chunk.get("timings"), dict):  # llama.cpp
        timing["llamacpp"] = chunk["timings"]
    if isinstance(chunk.get("sla_metrics"), dict):  # Novita via HF router
        timing["sla_metrics"] = {k: v for k, v in chunk["sla_metrics"].items() if k == "ttft_ms"}
    return timing or None


def _error_kind(error: Any) -> ErrorKind:
    # A rate limit is the same condition as an HTTP 429, whatever the transport
    # (as openai-responses, anthropic and bedrock-converse already file it).
    if isinstance(error, dict) and any("rate_limit" in str(error.get(k) or "") for k in ("code", "type")):
        return ErrorKind.RATE_LIMITED
    return ErrorKind.STREAM_ERROR


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        code = error.get("code") or error.get("type")
        message = error.get("message") or ""
        return f"{code}: {message}" if code else str(message)
    return str(error)
