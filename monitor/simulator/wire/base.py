"""The contract of a simulated wire protocol, and the helpers they share.

A wire module does three things: claim its routes and read what it needs
from a request (`route`, `read_call`), shape error bodies like its provider
(`error_body`), and encode one response stream as bytes (`open`, `delta`,
`close`, plus the broken variants the faults need). It never sleeps, never
touches sockets and never decides timing: `stream.py` does.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from monitor.simulator.answers import Scripted
from monitor.simulator.request import HttpError, Request

# A private-use character marks where a broken byte sequence goes (invalid_utf8)
# or where a huge line's filler starts (huge_line).
SENTINEL = "\ue000"
SENTINEL_BYTES = SENTINEL.encode()
INVALID_UTF8 = b"\xff\xfe\xc3("


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def hole(name: str) -> str:
    """A placeholder for `Template`: a string JSON renders as `"\\u0001name\\u0001"`."""
    return f"\x01{name}\x01"


_HOLE = re.compile(rb'"\\u0001(\w+)\\u0001"')


class Template:
    """A JSON document rendered by concatenating pre-encoded bytes around its holes.

    Per-token chunks are the hot path at 200 concurrent streams: this costs
    one small `json.dumps` per hole instead of one per whole document.
    """

    __slots__ = ("_names", "_static")

    def __init__(self, obj: Any) -> None:
        parts = _HOLE.split(dumps(obj))
        self._static = parts[0::2]
        self._names = [name.decode() for name in parts[1::2]]

    def render(self, **values: Any) -> bytes:
        out = [self._static[0]]
        for name, static in zip(self._names, self._static[1:], strict=True):
            out.append(dumps(values[name]))
            out.append(static)
        return b"".join(out)

    def bind(self, **values: Any) -> Template:
        """A copy with some holes filled: per-request values in a cached, shared template."""
        static, names = [self._static[0]], []
        for name, part in zip(self._names, self._static[1:], strict=True):
            if name in values:
                static[-1] += dumps(values[name]) + part
            else:
                names.append(name)
                static.append(part)
        bound = Template.__new__(Template)
        bound._static, bound._names = static, names
        return bound


@dataclass(frozen=True, slots=True)
class Call:
    """What the server needs to know about a request, read by its wire module."""

    model: str
    max_tokens: int | None = None
    include_usage: bool = True  # the client asked for usage (OpenAI `stream_options`)
    api_key: str | None = field(default=None, repr=False)
    verify_key: bool = True  # compare `api_key` with `--api-key` (not for SigV4, not for Ollama)
    prompt_chars: int = 0
    region: str | None = None  # a region the route itself names (Vertex `locations/{l}`)
    options: Mapping[str, Any] = field(default_factory=dict)
    prompt_text: str = ""  # the prompt's strings, counted in o200k tokens for `prompt_tokens`
    answer: Scripted | None = None  # a tool call or a JSON document the request asked for
    cache_prefix: str | None = None  # the prompt text a cache marker closes (Anthropic, Bedrock)


@dataclass(frozen=True, slots=True)
class StreamInfo:
    request_id: str
    model: str
    prompt_tokens: int
    usage: bool  # report usage in the stream
    created_s: int  # wall-clock epoch seconds, for `created` fields
    options: Mapping[str, Any] = field(default_factory=dict)
    cache_read_tokens: int = 0  # of prompt_tokens, served from the prompt cache
    cache_write_tokens: int = 0  # of prompt_tokens, written to it (explicit caches state them)


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the stream ended, for the closing events' usage and timings."""

    finish: str  # "stop" or "length"
    reasoning_tokens: int
    answer_tokens: int
    arrival_ns: int
    first_token_ns: int | None
    last_token_ns: int | None
    end_ns: int

    @property
    def output_tokens(self) -> int:
        return self.reasoning_tokens + self.answer_tokens


# Generic error kinds: the wire modules map each to their provider's wording.
ERROR_MESSAGES = {
    "rate_limited": "Rate limit reached for requests. Please try again in 2s.",
    "server_error": "The server had an error while processing your request. Sorry about that!",
    "overloaded": "Overloaded",
    "auth": "Invalid authentication credentials.",
    "client_error": "Invalid request: the request body does not match the schema.",
    "not_found": "Not found.",
}


def prompt_chars(obj: Any, skip: frozenset[str] = frozenset({"model", "role", "type", "stream"})) -> int:
    """Characters of every string in a request body, keys in `skip` excepted.

    A protocol-agnostic prompt size: messages, system prompts, parts, inputs.
    """
    if isinstance(obj, str):
        return len(obj)
    if isinstance(obj, dict):
        return sum(prompt_chars(v, skip) for k, v in obj.items() if k not in skip)
    if isinstance(obj, list):
        return sum(prompt_chars(v, skip) for v in obj)
    return 0


def stable_id(text: str) -> str:
    """A deployment-hash-like id for a name (LiteLLM sends a sha256 hex)."""
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


def route_options(behaviour: Any) -> dict[str, Any]:
    """What the encoder needs to name the route inside the stream."""
    options: dict[str, Any] = {}
    if behaviour.served_by and behaviour.gateway == "openrouter":
        options["provider"] = behaviour.served_by
    if behaviour.fingerprint:
        options["fingerprint"] = behaviour.fingerprint
    return options


def prompt_text(*objs: Any, skip: frozenset[str] = frozenset({"model", "role", "type", "stream"})) -> str:
    """Every string of the prompt parts of a request body, joined: what usage counts as input."""
    out: list[str] = []

    def walk(obj: Any) -> None:
        if isinstance(obj, str):
            out.append(obj)
        elif isinstance(obj, dict):
            for k, v in obj.items():
                if k not in skip:
                    walk(v)
        elif isinstance(obj, list):
            for v in obj:
                walk(v)

    for obj in objs:
        walk(obj)
    return "\n".join(out)


def marked_prefix(*objs: Any) -> str | None:
    """The prompt text up to the last cache marker: a block carrying `cache_control` (Anthropic,
    the block included) or a `cachePoint` block (Bedrock, the blocks before it). None: unmarked."""
    out: list[str] = []
    mark = 0

    def walk(obj: Any) -> None:
        nonlocal mark
        if isinstance(obj, str):
            out.append(obj)
        elif isinstance(obj, dict):
            if "cachePoint" in obj:
                mark = len(out)
                return
            for k, v in obj.items():
                if k not in ("model", "role", "type", "stream", "cache_control"):
                    walk(v)
            if "cache_control" in obj:
                mark = len(out)
        elif isinstance(obj, list):
            for v in obj:
                walk(v)

    for obj in objs:
        walk(obj)
    return "\n".join(out[:mark]) if mark else None


def body_object(req: Request) -> dict[str, Any]:
    data = req.json()
    if not isinstance(data, dict):
        raise HttpError(400, "request body must be a JSON object")
    return data


def optional_int(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise HttpError(400, f"{name} must be an integer")
    return value


def bearer(headers: Mapping[str, str]) -> str | None:
    value = headers.get("authorization", "")
    return value[7:].strip() if value[:7].lower() == "bearer " else None


class WireEncoder(ABC):
    """One response stream of one protocol. A new instance per request."""

    protocol: ClassVar[str]
    # The path a user's `regions:` URL ends with for this protocol (`.../v1` for OpenAI's),
    # so tests, the demo and benchmarks build base URLs without a table of their own.
    base_path: ClassVar[str] = ""
    content_type: ClassVar[str] = "text/event-stream; charset=utf-8"
    id_header: ClassVar[str | None] = None  # the protocol's own request-id header
    overloaded_status: ClassVar[int] = 503
    auth_status: ClassVar[int] = 401
    requires_credentials: ClassVar[bool] = False  # refuse requests without any credential
    # The prompt cache caches only what a request marks (Anthropic, Bedrock), not any prefix.
    explicit_cache: ClassVar[bool] = False
    # The provider's remaining-quota headers (requests, tokens): OpenAI's spelling,
    # which Groq, LiteLLM and most compatible hosts share; Anthropic overrides.
    ratelimit_headers: ClassVar[tuple[str, str]] = ("x-ratelimit-remaining-requests", "x-ratelimit-remaining-tokens")

    # --------------------------------------------------------- request side
    @classmethod
    @abstractmethod
    def route(cls, method: str, path: str) -> dict[str, str] | None:
        """Path parameters if this protocol serves `path`, else None."""

    @classmethod
    @abstractmethod
    def read_call(cls, req: Request, params: Mapping[str, str]) -> Call:
        """Model, limits and credentials from the request; HttpError(400) if unusable."""

    @classmethod
    @abstractmethod
    def error_body(cls, status: int, kind: str, message: str, request_id: str) -> tuple[bytes, list[tuple[str, str]]]:
        """The provider's error body (and extra headers) for an HTTP error."""

    @classmethod
    def response_headers(cls, request_id: str) -> list[tuple[str, str]]:
        """The request's id in the provider's own header (`id_header`: Anthropic `request-id`,
        Bedrock `x-amzn-RequestId`, Azure `apim-request-id`), and in `x-request-id` on every
        protocol: OpenAI's own header, and the simulator's handle for its truth records, which
        tests and benchmarks look up by it. Real Anthropic, Bedrock, Gemini and Ollama responses
        carry no `x-request-id` (Gemini names a response only by its body's `responseId`)."""
        headers = [("x-request-id", request_id)]
        if cls.id_header:
            headers.append((cls.id_header, request_id))
        return headers

    @classmethod
    def route_headers(cls, behaviour: Any) -> list[tuple[str, str]]:
        """Headers naming the route and the quota left, as real gateways send them
        (shapes from the recorded LiteLLM proxy responses in shared/fixtures/gateways)."""
        headers: list[tuple[str, str]] = []
        if behaviour.served_by and behaviour.gateway == "litellm":
            headers += [
                ("x-litellm-model-id", stable_id(behaviour.served_by)),
                ("x-litellm-model-api-base", behaviour.served_by),
                ("x-litellm-attempted-retries", "0"),
                ("x-litellm-attempted-fallbacks", str(behaviour.fallbacks)),
            ]
        elif behaviour.served_by and behaviour.gateway == "azure":
            headers.append(("x-ms-region", behaviour.served_by))
        for name, value in zip(
            cls.ratelimit_headers,
            (behaviour.ratelimit_remaining_requests, behaviour.ratelimit_remaining_tokens),
            strict=True,
        ):
            if value is not None:
                headers.append((name, str(value)))
        return headers

    # --------------------------------------------------------- stream side
    def __init__(self, info: StreamInfo) -> None:
        self.info = info
        self._corrupt = False

    def open(self) -> bytes:
        """Bytes sent with the headers, before any token (role chunk, message_start …)."""
        return b""

    def media_type(self) -> str:
        return self.content_type

    @abstractmethod
    def delta(self, reasoning: bool, text: str, tokens: int = 1) -> bytes:
        """One chunk carrying `tokens` tokens as `text` (with any block transition it implies)."""

    # Gemini and Ollama send a tool call whole, in one part; the others stream its arguments.
    whole_tool_calls: ClassVar[bool] = False

    def tool_delta(self, name: str, arguments: str, first: bool) -> bytes:
        """One chunk of a tool call's arguments; `first` opens the call (and names it)."""
        raise NotImplementedError(f"{self.protocol}: no tool calls in the simulator")

    @abstractmethod
    def close(self, outcome: Outcome) -> bytes:
        """Everything after the last token, the terminal event included."""

    @abstractmethod
    def stream_error(self, throttle: bool) -> bytes:
        """An in-stream error event in the protocol's own shape (429-like if `throttle`)."""

    @abstractmethod
    def malformed(self) -> bytes:
        """A correctly framed event whose JSON is invalid."""

    def corrupt_delta(self, reasoning: bool, text: str, tokens: int = 1) -> bytes:
        """A token chunk whose text carries invalid UTF-8 bytes."""
        self._corrupt = True
        try:
            return self.delta(reasoning, text + SENTINEL, tokens)
        finally:
            self._corrupt = False

    def huge_line(self, size: int, piece: int = 64 * 1024) -> Iterator[bytes]:
        """The start of a token chunk whose text never ends: `size` bytes, no newline."""
        prefix = self.delta(False, SENTINEL).split(SENTINEL_BYTES, 1)[0]
        yield prefix
        filler = b"a" * piece
        for sent in range(0, size, piece):
            yield filler[: min(piece, size - sent)]

    def payload(self, data: bytes) -> bytes:
        """Every JSON payload passes here: where `corrupt_delta` breaks the bytes."""
        return data.replace(SENTINEL_BYTES, INVALID_UTF8) if self._corrupt else data


class SSEEncoder(WireEncoder):
    """Server-sent events: `event:` (optional) and `data:` lines, a blank line after each."""

    separator: ClassVar[bytes] = b"\n\n"

    def sse(self, data: bytes, event: str | None = None) -> bytes:
        data = self.payload(data)
        if event is None:
            return b"data: " + data + self.separator
        return b"event: " + event.encode() + b"\ndata: " + data + self.separator
