"""`bedrock-converse`: Amazon Bedrock ConverseStream, a binary event stream.

Needs botocore (the optional extra `firsttoken[bedrock]`) for SigV4 signing,
the standard AWS credential chain and CRC-checked frame decoding; it is
imported lazily so the rest of firsttoken runs without it, and
`config_errors` names the extra when it is missing.

Auth: SigV4 (service `bedrock`) with credentials from the standard chain
(env, profile `options.aws_profile`, SSO, IMDS ...), or, when the provider has
an `api_key`, that key as a Bedrock API key bearer token. The signing region
is `options.aws_region`, else the one in the endpoint host
(`bedrock-runtime.<region>.amazonaws.com`), else the config's region name.

Frames: the 12-byte prelude is checked here (its CRC, and a length cap) before
any payload is buffered, so garbage cannot make the parser wait for 4 GiB;
botocore then checks the message CRC and parses the headers.

Tokens: `contentBlockDelta` `text` (an empty one is not a token),
`reasoningContent.text` (its `signature` and `redactedContent` are not text),
`toolUse.input`, and a tool's name from `contentBlockStart`. The terminal is
`metadata`, which follows `messageStop` and carries usage and the service's own
`metrics.latencyMs`. Exceptions arrive as frames: throttling is `rate_limited`
(as a 429 would be), everything else `stream_error`.
"""

from __future__ import annotations

import functools
import importlib
import json
import re
import struct
import zlib
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit

from monitor.protocols.base import (
    Event,
    Finished,
    HttpRequest,
    Message,
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
from monitor.protocols.features import forced_tool, reasoning_budget, reasoning_effort, tool_functions, tool_parameters
from monitor.protocols.sse import as_int, loads_json
from monitor.sample import ErrorKind

EXTRA_MISSING = "protocol: bedrock-converse needs the optional extra: pip install 'firsttoken[bedrock]'"
# A ConverseStream frame is a few hundred bytes. The format allows 16 MiB, but
# buffering and decoding a frame that size stalled the event loop for ~0.5 s:
# the same 1 MiB bound as an SSE line (monitor/protocols/sse.py).
MAX_FRAME_BYTES = 1 << 20
_PRELUDE = 12
_MIN_FRAME = _PRELUDE + 4  # prelude + message CRC, no headers, no payload
_REGION_IN_HOST = re.compile(r"bedrock-runtime(?:-fips)?\.([a-z]{2}(?:-[a-z]+)+-\d+)\.")


def botocore_available() -> bool:
    try:
        importlib.import_module("botocore.auth")
        importlib.import_module("botocore.eventstream")
    except ImportError:
        return False
    return True


@register
class BedrockConverse(WireProtocol):
    name = "bedrock-converse"
    genai_provider = "aws.bedrock"  # OpenTelemetry gen_ai.provider.name
    content_types = ("application/vnd.amazon.eventstream",)
    request_id_headers = ("x-amzn-requestid", "x-amzn-request-id")

    def build_request(self, req: ProbeRequest) -> HttpRequest:
        url = join_url(req.base_url, f"model/{quote(req.model, safe='')}/converse-stream")
        body = json_body(_body(req), req.params)
        headers = {"content-type": "application/json", "accept": "application/vnd.amazon.eventstream"}
        headers.update(req.headers)
        if req.api_key:
            headers["authorization"] = f"Bearer {req.api_key}"
            return HttpRequest("POST", url, headers, body)
        return HttpRequest(
            "POST", url, sign(url, headers, body, signing_region(req), req.options.get("aws_profile")), body
        )

    def new_parser(self) -> StreamParser:
        return ConverseStreamParser()

    def config_errors(self, options: Mapping[str, Any], has_api_key: bool) -> list[str]:
        errors = [] if botocore_available() else [EXTRA_MISSING]
        for key in ("aws_region", "aws_profile"):
            value = options.get(key)
            if value is not None and (not isinstance(value, str) or not value):
                errors.append(f"options.{key}: must be a non-empty string")
        return errors


def _body(req: ProbeRequest) -> dict[str, Any]:
    body: dict[str, Any] = {
        "messages": [
            {"role": "assistant" if m.role == "assistant" else "user", "content": _content(m)}
            for m in req.messages
            if m.role != "system"
        ],
        "inferenceConfig": {"maxTokens": req.max_tokens},
    }
    system = [{"text": m.content} for m in req.messages if m.role == "system"]
    if system:
        body["system"] = system
    _add_features(body, req)
    return body


def _add_features(body: dict[str, Any], req: ProbeRequest) -> None:
    """Sampling, `toolConfig`, `outputConfig.textFormat` (structured output, GA since 2026-02)
    and reasoning, which Converse passes to the model in `additionalModelRequestFields`."""
    if req.temperature is not None:
        body["inferenceConfig"]["temperature"] = req.temperature
    if req.tools and req.tool_choice != "none":  # Converse has no "none": send no tools
        config: dict[str, Any] = {
            "tools": [
                {
                    "toolSpec": {"name": fn["name"], "inputSchema": {"json": tool_parameters(fn)}}
                    | ({"description": fn["description"]} if fn.get("description") else {})
                }
                for fn in tool_functions(req.tools)
            ]
        }
        name = forced_tool(req.tool_choice)
        if name:
            config["toolChoice"] = {"tool": {"name": name}}
        elif req.tool_choice == "required":
            config["toolChoice"] = {"any": {}}
        elif req.tool_choice == "auto":
            config["toolChoice"] = {"auto": {}}
        body["toolConfig"] = config
    if req.response_format is not None:
        fmt = req.response_format
        schema = json.dumps(fmt.schema, separators=(",", ":"))  # Converse wants the schema as a string
        body["outputConfig"] = {
            "textFormat": {"type": "json_schema", "structure": {"jsonSchema": {"name": fmt.name, "schema": schema}}}
        }
    if req.reasoning is not None:
        # The field belongs to the model: Claude takes a thinking budget (as on the Anthropic API),
        # the others (gpt-oss, DeepSeek, Nova) an effort.
        if "anthropic." in req.model:
            budget = max(1024, reasoning_budget(req.reasoning))
            extra: dict[str, Any] = {"thinking": {"type": "enabled", "budget_tokens": budget}}
            body["inferenceConfig"]["maxTokens"] = req.max_tokens + budget
        else:
            extra = {"reasoning_effort": reasoning_effort(req.reasoning)}
        body["additionalModelRequestFields"] = extra


def signing_region(req: ProbeRequest) -> str:
    explicit = req.options.get("aws_region")
    if explicit:
        return str(explicit)
    match = _REGION_IN_HOST.search(urlsplit(req.base_url).hostname or "")
    return match.group(1) if match else req.region


@functools.cache
def _session(profile: str | None) -> Any:
    # One botocore session per profile: it caches the resolved credentials and
    # refreshes temporary ones itself, so the chain is not walked per probe.
    import botocore.session

    return botocore.session.Session(profile=profile)


def sign(url: str, headers: Mapping[str, str], body: bytes, region: str, profile: str | None) -> dict[str, str]:
    """Headers for `url` signed with SigV4. Raises NoCredentialsError."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.exceptions import NoCredentialsError

    credentials = _session(profile).get_credentials()
    if credentials is None:
        raise NoCredentialsError()
    request = AWSRequest(method="POST", url=url, data=body, headers=dict(headers))
    SigV4Auth(credentials.get_frozen_credentials(), "bedrock", region).add_auth(request)
    return dict(request.headers.items())


class ConverseStreamParser(StreamParser):
    def __init__(self) -> None:
        from botocore.eventstream import EventStreamBuffer

        self._frames = EventStreamBuffer()
        self._buf = bytearray()
        self._stop_reason: str | None = None
        self._done = False

    def feed(self, data: bytes) -> list[Event]:
        self._buf += data
        out: list[Event] = []
        while len(self._buf) >= _PRELUDE:
            total, headers_len, prelude_crc = struct.unpack_from("!III", self._buf)
            if zlib.crc32(self._buf[:8]) != prelude_crc:
                raise ProtocolViolation("event stream prelude checksum mismatch")
            if not _MIN_FRAME <= total <= MAX_FRAME_BYTES or headers_len > total - _MIN_FRAME:
                raise ProtocolViolation(f"event stream frame of {total} bytes is out of bounds")
            if len(self._buf) < total:
                break
            frame = bytes(self._buf[:total])
            del self._buf[:total]
            self._on_frame(frame, out)
        return out

    def close(self) -> list[Event]:
        # A body that ends after messageStop but without metadata did finish
        # the answer; only the usage is missing (an estimate stands in).
        if not self._done and self._stop_reason is not None:
            self._done = True
            return [Finished(self._stop_reason)]
        return []

    def _on_frame(self, frame: bytes, out: list[Event]) -> None:
        from botocore.eventstream import ParserError

        try:
            self._frames.add_data(frame)
            message = next(self._frames)
        except (ParserError, KeyError, struct.error, UnicodeDecodeError, ValueError, IndexError) as exc:
            raise ProtocolViolation(f"bad event stream frame ({type(exc).__name__})") from None
        headers = message.headers
        message_type = headers.get(":message-type")
        if message_type == "exception":
            payload = self._json(message.payload)
            kind = str(headers.get(":exception-type") or "exception")
            text = (payload.get("message") or payload.get("Message")) if isinstance(payload, dict) else None
            failure = ErrorKind.RATE_LIMITED if kind == "throttlingException" else ErrorKind.STREAM_ERROR
            out.append(StreamFailure(failure, f"{kind}: {text}" if text else kind))
        elif message_type == "error":
            code = headers.get(":error-code") or "error"
            out.append(StreamFailure(ErrorKind.STREAM_ERROR, f"{code}: {headers.get(':error-message') or ''}"))
        elif message_type == "event" and not self._done:
            payload = self._json(message.payload)
            if isinstance(payload, dict):
                self._on_event(str(headers.get(":event-type")), payload, out)

    def _on_event(self, kind: str, payload: Mapping[str, Any], out: list[Event]) -> None:
        if kind == "contentBlockDelta":
            delta = payload.get("delta")
            if isinstance(delta, dict):
                _emit(out, TokenKind.ANSWER, delta.get("text"))
                reasoning = delta.get("reasoningContent")
                if isinstance(reasoning, dict):
                    _emit(out, TokenKind.REASONING, reasoning.get("text"))
                tool = delta.get("toolUse")
                if isinstance(tool, dict):
                    _emit_tool(out, payload, "", tool.get("input"))
        elif kind == "contentBlockStart":
            start = payload.get("start")
            tool = start.get("toolUse") if isinstance(start, dict) else None
            if isinstance(tool, dict):
                _emit_tool(out, payload, tool.get("name"), "")
        elif kind == "messageStop":
            self._stop_reason = str(payload.get("stopReason") or "stop")
        elif kind == "metadata":
            usage = payload.get("usage")
            if isinstance(usage, dict):
                out.append(_usage(usage))
            metrics = payload.get("metrics")
            if isinstance(metrics, dict) and as_int(metrics.get("latencyMs")) is not None:
                out.append(ResponseInfo(server_timing={"latencyMs": as_int(metrics["latencyMs"])}))
            self._done = True
            out.append(Finished(self._stop_reason))

    @staticmethod
    def _json(payload: bytes) -> Any:
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolViolation("invalid UTF-8 in an event stream payload") from None
        return loads_json(text, "event stream payload") if text else {}


def _content(message: Message) -> list[dict[str, Any]]:
    split = message.cache_split()
    if split is None:
        return [{"text": message.content}]
    # Converse caches the blocks before a `cachePoint` (Claude and Nova models that support it).
    prefix, rest = split
    return [{"text": prefix}, {"cachePoint": {"type": "default"}}, {"text": rest}]


def _emit(out: list[Event], kind: TokenKind, text: Any) -> None:
    if isinstance(text, str) and text:
        out.append(TokenDelta(kind, text))


def _emit_tool(out: list[Event], payload: Mapping[str, Any], name: Any, arguments: Any) -> None:
    # The content block index names the call its start and deltas belong to.
    token = tool_delta(as_int(payload.get("contentBlockIndex")) or 0, name, arguments)
    if token is not None:
        out.append(token)


def _usage(usage: Mapping[str, Any]) -> UsageReport:
    uncached = as_int(usage.get("inputTokens"))
    read = as_int(usage.get("cacheReadInputTokens"))
    written = as_int(usage.get("cacheWriteInputTokens"))
    # inputTokens excludes cache reads and writes; report the whole prompt, as other protocols do.
    total_input = None if uncached is None else uncached + (read or 0) + (written or 0)
    return UsageReport(
        output_tokens=as_int(usage.get("outputTokens")),
        input_tokens=total_input,
        cache_read_tokens=read,
        cache_write_tokens=written,
    )
