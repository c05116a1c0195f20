"""The contract every wire protocol implements, and the registry that finds them.

A protocol does two pure things: build the HTTP request for a probe, and turn
the bytes of a streamed response into `Event`s. It never touches the network
or the clock: the probe stamps each raw read with `perf_counter_ns()` and
hands the bytes to the parser, so every event inherits the arrival time of
the read that carried it. Nothing outside `monitor/protocols/` branches on
the protocol; it asks the protocol object instead.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

from monitor.protocols.features import JsonSchemaFormat, ReasoningSetting
from monitor.protocols.request_ids import error_body_request_id, pick_request_id
from monitor.protocols.route import NO_ROUTE, RouteTruth, gateway_route, join_route, lower_headers
from monitor.sample import ErrorKind


# --------------------------------------------------------------------- events
class TokenKind(StrEnum):
    ANSWER = "answer"  # visible answer text
    REASONING = "reasoning"  # thinking / reasoning text or summaries
    TOOL = "tool"  # tool-call arguments (and names)


@dataclass(frozen=True, slots=True)
class TokenDelta:
    """Generated output. `text` is never empty: empty deltas are not tokens."""

    kind: TokenKind
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta(TokenDelta):
    """A piece of a tool call: still a TOOL token for the timings (`text` is name + arguments),
    and, per call `index`, the name (once) and an arguments fragment for `expect.tool`."""

    index: int = 0
    name: str = ""
    arguments: str = ""


def tool_delta(index: int, name: Any, arguments: Any) -> ToolCallDelta | None:
    """A ToolCallDelta, or None when it carries nothing (not a token)."""
    name = name if isinstance(name, str) else ""
    if isinstance(arguments, Mapping | list):  # whole-call protocols hand parsed arguments
        arguments = json.dumps(arguments, ensure_ascii=False) if arguments else ""
    arguments = arguments if isinstance(arguments, str) else ""
    text = name + arguments
    return ToolCallDelta(TokenKind.TOOL, text, index, name, arguments) if text else None


@dataclass(frozen=True, slots=True)
class UsageReport:
    """Token counts as the provider reports them. None = not in this report.

    Reports are cumulative: a later non-None value replaces an earlier one,
    never adds to it (Anthropic `message_delta`, Gemini `usageMetadata`).
    """

    output_tokens: int | None = None
    input_tokens: int | None = None
    reasoning_tokens: int | None = None
    # Prompt-cache use as the response states it (DESIGN §13); `input_tokens` counts them too.
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Finished:
    """The protocol's terminal event: the answer is complete."""

    reason: str | None = None


@dataclass(frozen=True, slots=True)
class StreamFailure:
    """An error reported inside the stream after HTTP 200."""

    error_kind: ErrorKind
    message: str


@dataclass(frozen=True, slots=True)
class ResponseInfo:
    """What the provider says about itself: returned model, provider timings,
    the route truth a stream carries (OpenRouter's chunk `provider`,
    `system_fingerprint`) and its ids; headers add the rest once per response
    (route.py, request_ids.py)."""

    model_version: str | None = None
    server_timing: Mapping[str, Any] | None = None
    served_by: str | None = None
    system_fingerprint: str | None = None
    # The body's ids, for `request_id` where no header names one (request_ids.py):
    # the response's own id (msg_…, chatcmpl-…, resp_…, Gemini responseId), and a
    # request id the body states outright (an Anthropic error event, Groq `x_groq.id`).
    response_id: str | None = None
    request_id: str | None = None


Event = TokenDelta | UsageReport | Finished | StreamFailure | ResponseInfo


class ProtocolViolation(Exception):
    """The stream is not what the protocol promises (error_kind `protocol`)."""


# ------------------------------------------------------------------- requests
@dataclass(frozen=True, slots=True)
class Message:
    role: str
    content: str
    # A cache probe's (DESIGN §13) stable prefix ends this many characters into `content`:
    # protocols that need a marker (Anthropic `cache_control`, Bedrock `cachePoint`) split the
    # content there; the others send it whole and the provider finds the prefix itself. 0: none.
    cache_prefix_chars: int = 0

    def cache_split(self) -> tuple[str, str] | None:
        """(stable prefix, the rest) where this message ends a cache prefix, else None."""
        if not 0 < self.cache_prefix_chars < len(self.content):
            return None
        return self.content[: self.cache_prefix_chars], self.content[self.cache_prefix_chars :]


@dataclass(frozen=True, slots=True)
class ProbeRequest:
    """Everything a protocol needs to build one request. Holds the secret."""

    base_url: str
    model: str
    messages: tuple[Message, ...]
    max_tokens: int
    region: str = ""
    api_key: str | None = field(default=None, repr=False)
    headers: Mapping[str, str] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)
    # Protocol-specific settings from the provider config (azure api_version,
    # gemini auth style, AWS profile ...). Validated by the protocol.
    options: Mapping[str, Any] = field(default_factory=dict)
    temperature: float | None = None
    tools: tuple[Mapping[str, Any], ...] = ()  # OpenAI-style {type: function, function: {...}}
    tool_choice: str | Mapping[str, Any] | None = None  # auto | none | required | {"name": fn}
    response_format: JsonSchemaFormat | None = None
    reasoning: ReasoningSetting | None = None


@dataclass(frozen=True, slots=True)
class HttpRequest:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes


def json_body(payload: Mapping[str, Any], params: Mapping[str, Any]) -> bytes:
    """Serialise a request body with the config's extra `params` deep-merged."""
    return json.dumps(deep_merge(dict(payload), params), separators=(",", ":")).encode()


def deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            base[key] = deep_merge(dict(base[key]), value)
        else:
            base[key] = value
    return base


def join_url(base: str, path: str) -> str:
    return base.rstrip("/") + "/" + path.lstrip("/")


# ------------------------------------------------------------------- protocol
class StreamParser(ABC):
    """Incremental, pure: bytes in, events out. Raises ProtocolViolation."""

    @abstractmethod
    def feed(self, data: bytes) -> list[Event]: ...

    def close(self) -> list[Event]:
        """The body ended. Flush whatever an unterminated last line holds."""
        return []


class WireProtocol(ABC):
    name: ClassVar[str]
    # OpenTelemetry GenAI semantic conventions: `gen_ai.provider.name` (their well-known values where
    # one applies) and `gen_ai.operation.name`. The one place a protocol maps onto them (monitor.agent.otel).
    genai_provider: ClassVar[str] = "_OTHER"
    genai_operation: ClassVar[str] = "chat"
    # Media types a successful streamed answer may carry; anything else
    # (an HTML error page behind a 200, say) is a `protocol` error.
    content_types: ClassVar[tuple[str, ...]] = ("text/event-stream",)
    request_id_headers: ClassVar[tuple[str, ...]] = ("x-request-id", "request-id")

    @abstractmethod
    def build_request(self, req: ProbeRequest) -> HttpRequest: ...

    @abstractmethod
    def new_parser(self) -> StreamParser: ...

    # Can the API constrain the answer to a JSON Schema? A prompt with `response_format`
    # on a provider whose protocol cannot is a config error (monitor.config: targets).
    supports_response_format: ClassVar[bool] = True

    def config_errors(self, options: Mapping[str, Any], has_api_key: bool) -> list[str]:
        """Problems with a provider's settings, as `field: message` strings."""
        return []

    def accepts_content_type(self, content_type: str | None) -> bool:
        if not content_type:
            return False
        media = content_type.split(";", 1)[0].strip().lower()
        return media in self.content_types

    def request_id(self, headers: Mapping[str, str] | None, body_id: str | None = None) -> str | None:
        """The provider's id for this request: its header, a gateway's forwarded copy,
        else `body_id` (what the stream or error body named); order in request_ids.py."""
        return pick_request_id(headers, self.request_id_headers, body_id)

    def error_request_id(self, body: bytes) -> str | None:
        """The request id an HTTP error's body states, if any."""
        return error_body_request_id(body)

    def pinned_route(self, params: Mapping[str, Any]) -> str | None:
        """The upstream a request's params pin first (None: nothing pinned)."""
        return None

    def route_headers(self, headers: Mapping[str, str]) -> RouteTruth:
        """Route truth in one response's headers (lower-case names). Gateways sit in
        front of any protocol, so their headers are read for all; a protocol adds its own."""
        return gateway_route(headers)

    def route_truth(
        self,
        headers: Mapping[str, str] | None,
        served_by: str | None = None,
        system_fingerprint: str | None = None,
        pinned: str | None = None,
    ) -> RouteTruth:
        """Headers (parsed here, once) joined with what the stream named."""
        from_headers = self.route_headers(lower_headers(headers)) if headers else NO_ROUTE
        return join_route(from_headers, served_by, system_fingerprint, pinned)

    def error_message(self, status: int, body: bytes) -> str:
        """A short human message from an error response body."""
        return error_message_from_body(status, body)


def classify_http_status(status: int) -> ErrorKind | None:
    """The error kind of a non-2xx status (None for success)."""
    if 200 <= status < 300:
        return None
    if status in (401, 403):
        return ErrorKind.AUTH
    if status == 429:
        return ErrorKind.RATE_LIMITED
    if status >= 500:  # includes Anthropic's 529 overloaded
        return ErrorKind.SERVER_ERROR
    return ErrorKind.CLIENT_ERROR


def error_message_from_body(status: int, body: bytes) -> str:
    """Pull `error.message` (or similar) out of a JSON error; else the text."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    message = _find_message(data)
    if message:
        return f"HTTP {status}: {message}"
    if text.lstrip().lower().startswith(("<!doctype", "<html")):
        return f"HTTP {status}: HTML error page"
    return f"HTTP {status}: {text}" if text else f"HTTP {status}"


def _find_message(data: Any, depth: int = 0) -> str | None:
    if depth > 3:
        return None
    if isinstance(data, list) and data:
        return _find_message(data[0], depth + 1)
    if not isinstance(data, dict):
        return None
    for key in ("message", "Message", "detail", "error_description"):
        value = data.get(key)
        if isinstance(value, str) and value:
            return value
    for key in ("error", "errors"):
        if key in data:
            inner = data[key]
            if isinstance(inner, str) and inner:
                return inner
            found = _find_message(inner, depth + 1)
            if found:
                return found
    return None


# ------------------------------------------------------------------- registry
_REGISTRY: dict[str, WireProtocol] = {}


def register(cls: type[WireProtocol]) -> type[WireProtocol]:
    _REGISTRY[cls.name] = cls()
    return cls


def discover() -> None:
    """Import every module of `monitor.protocols` (each registers itself with `@register`).

    Cheap when nothing is new (a directory listing; imported modules are cached), so an
    unknown name triggers one more look before it is an error: a module dropped into the
    package, or a folder added to its `__path__`, is found on first use.
    """
    import monitor.protocols as package

    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")


def get_protocol(name: str) -> WireProtocol:
    if name not in _REGISTRY:
        discover()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown protocol {name!r}") from None


def protocol_names() -> list[str]:
    discover()
    return sorted(_REGISTRY)
