"""One probe: send a target's prompt, time the streamed answer, return a Sample.

This is the thin I/O edge around the pure parser and measurement. Timing
rules (DESIGN §1): `t0` is taken just before the request is handed to httpx
(the request is fully built before that); every raw read is stamped with
`perf_counter_ns()` the moment it is returned, before it is parsed.

A probe never raises and never retries: every outcome is a Sample.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets as _random
from collections.abc import Iterable
from dataclasses import replace

import httpx

from monitor.probe.clock import SYSTEM_CLOCK, Clock
from monitor.probe.judge import AnswerRules, judge
from monitor.probe.session import StreamSession
from monitor.probe.synthetic import synthetic_messages
from monitor.probe.transport.trace import CURRENT_TRACE, ConnectionTrace
from monitor.protocols.base import (
    HttpRequest,
    JsonSchemaFormat,
    Message,
    ProbeRequest,
    ReasoningSetting,
    WireProtocol,
    classify_http_status,
    get_protocol,
)
from monitor.redact import redact
from monitor.sample import ErrorKind, Sample

MAX_ERROR_BODY_BYTES = 64 * 1024
MAX_ERROR_MESSAGE_CHARS = 500


def with_nonce(messages: tuple[Message, ...], nonce: str) -> tuple[Message, ...]:
    """Prefix the first message, so no provider prompt cache can match it."""
    if not messages:
        return messages
    first = messages[0]
    return (replace(first, content=f"[{nonce}] {first.content}"), *messages[1:])


def with_cache_tail(messages: tuple[Message, ...], nonce: str) -> tuple[Message, ...]:
    """A cache probe's request: everything sent so far is the stable prefix (marked for the
    protocols that need a marker), and a fresh nonce follows it, so no two requests are the
    same whole (a gateway's response cache cannot answer) while the prefix can be reused."""
    if not messages:
        return messages
    last = messages[-1]
    tail = replace(last, content=f"{last.content}\n\n[{nonce}]", cache_prefix_chars=len(last.content))
    return (*messages[:-1], tail)


def probe_request(target, nonce: str | None = None, cache_nonce: str | None = None) -> ProbeRequest:
    """The protocol-neutral request for a config Target.

    `cache_nonce`: a cache probe's round nonce (monitor.probe.cache_pair), put first so the round's
    prefix is new to the provider's cache (the cold probe) and then the same (the warm one)."""
    prompt = target.prompt_spec
    messages = tuple(prompt.messages)
    if prompt.synthetic is not None:
        messages = synthetic_messages(messages, prompt.synthetic.tokens, prompt.synthetic.seed)
    if cache_nonce is not None:
        messages = with_cache_tail(with_nonce(messages, cache_nonce), nonce or _random.token_hex(4))
    elif target.cache_bust:
        messages = with_nonce(messages, nonce or _random.token_hex(4))
    fmt, reasoning = prompt.response_format, target.reasoning
    return ProbeRequest(
        base_url=target.base_url,
        model=target.model,
        messages=messages,
        max_tokens=prompt.max_tokens,
        region=target.region,
        api_key=target.api_key,
        headers=dict(target.headers),
        params=dict(target.params),
        options=dict(target.options),
        temperature=prompt.temperature,
        tools=tuple(prompt.tools),
        tool_choice=prompt.tool_choice,
        response_format=None if fmt is None else JsonSchemaFormat(fmt.json_schema, fmt.name, fmt.strict),
        reasoning=None if reasoning is None else ReasoningSetting(reasoning.effort, reasoning.budget_tokens),
    )


async def probe_target(
    client: httpx.AsyncClient,
    target,
    *,
    agent: str = "local",
    secrets: Iterable[str] = (),
    sched_lag_ms: float | None = None,
    clock: Clock = SYSTEM_CLOCK,
    price=None,
    cache_state: str | None = None,
    cache_nonce: str | None = None,
) -> Sample:
    """Probe one config Target (see monitor.config.Target); `price` (a config Price) gives cost_usd.

    A cache probe's half (`cache_state` cold or warm, with the round's `cache_nonce`) is one
    request like any other; monitor.probe.cache_pair sends the pair."""
    secret_values = (*secrets, *((target.api_key,) if target.api_key else ()))
    base = Sample(
        target=target.id,
        provider=target.provider,
        model=target.model,
        region=target.region,
        prompt=target.prompt,
        started_at=clock.utcnow(),
        ok=False,
        agent=agent,
        sched_lag_ms=sched_lag_ms,
        cache_state=cache_state,
    )
    try:
        protocol = get_protocol(target.protocol)
        http_request = protocol.build_request(probe_request(target, cache_nonce=cache_nonce))
    except Exception as exc:  # e.g. no AWS credentials in the chain
        return _failed(
            base,
            ErrorKind.AUTH if _is_credentials_error(exc) else ErrorKind.CLIENT_ERROR,
            f"cannot build request: {exc}",
            secret_values,
        )
    return await measure_request(
        client,
        protocol,
        http_request,
        base,
        timeout_s=target.timeout_s,
        ttft_timeout_s=target.ttft_timeout_s,
        secrets=secret_values,
        clock=clock,
        pinned_route=protocol.pinned_route(target.params),
        rules=AnswerRules.for_target(target, price),
    )


async def measure_request(
    client: httpx.AsyncClient,
    protocol: WireProtocol,
    http_request: HttpRequest,
    base: Sample,
    *,
    timeout_s: float,
    ttft_timeout_s: float,
    secrets: Iterable[str] = (),
    clock: Clock = SYSTEM_CLOCK,
    pinned_route: str | None = None,
    rules: AnswerRules | None = None,
) -> Sample:
    """Send a built request and measure the response into `base`'s fields.

    `pinned_route` is the upstream the request asked for first (the protocol's
    `pinned_route(params)`); a response served by another is a fallback."""
    request = client.build_request(
        http_request.method, http_request.url, headers=http_request.headers, content=http_request.body
    )
    trace = ConnectionTrace()
    request.extensions["trace"] = trace
    trace_token = CURRENT_TRACE.set(trace)
    loop = asyncio.get_running_loop()
    response: httpx.Response | None = None
    session: StreamSession | None = None
    headers_ns: int | None = None
    error: tuple[ErrorKind, str] | None = None
    base = replace(base, started_at=clock.utcnow())
    t0_ns = clock.perf_ns()
    ttft_deadline_ns = t0_ns + int(min(ttft_timeout_s, timeout_s) * 1e9)
    deadline_ns = t0_ns + int(timeout_s * 1e9)
    loop_t0 = loop.time()
    first_deadline = loop_t0 + min(ttft_timeout_s, timeout_s)
    try:
        async with asyncio.timeout_at(first_deadline) as deadline:
            try:
                response = await client.send(request, stream=True)
                headers_ns = trace.headers_ns or clock.perf_ns()
                status_kind = classify_http_status(response.status_code)
                if status_kind is not None:
                    body = await _read_capped(response)
                    error = (status_kind, _http_error_text(protocol, response, body))
                    # The id an error body states (Anthropic's `request_id`), should no header name one.
                    base = replace(base, request_id=protocol.error_request_id(body))
                elif not protocol.accepts_content_type(response.headers.get("content-type")):
                    body = await _read_capped(response)
                    error = (ErrorKind.PROTOCOL, _content_type_text(protocol, response, body))
                else:
                    session = StreamSession(protocol.new_parser(), t0_ns, rules is not None and rules.needs_answer)
                    rescheduled = False
                    t_ns = headers_ns
                    async for data in response.aiter_bytes():
                        # The backend stamped the read these bytes came from; the
                        # fallback covers transports without that stamp.
                        t_ns = max(trace.read_ns or 0, t0_ns) if trace.read_ns else clock.perf_ns()
                        # Bytes stamped past a deadline are late even if the
                        # timer has not fired yet (or, in simulated time, never will).
                        first_seen = session.measurement.first_token_ns is not None
                        if t_ns > deadline_ns or (not first_seen and t_ns > ttft_deadline_ns):
                            raise TimeoutError
                        if not session.feed(t_ns, data):
                            break
                        if not rescheduled and session.measurement.first_token_ns is not None:
                            deadline.reschedule(loop_t0 + timeout_s)
                            rescheduled = True
                    else:
                        session.close(t_ns)
            except httpx.HTTPError as exc:
                error = _transport_error(exc, headers_received=headers_ns is not None)
    except TimeoutError:
        got_token = session is not None and session.measurement.first_token_ns is not None
        if got_token:
            error = (ErrorKind.TIMEOUT, f"probe exceeded timeout of {timeout_s:g}s")
        else:
            error = (ErrorKind.TIMEOUT, f"no first token within {min(ttft_timeout_s, timeout_s):g}s")
    except Exception as exc:  # never let a probe crash the service
        error = (ErrorKind.PROTOCOL, f"unexpected {type(exc).__name__}: {exc}")
    finally:
        end_ns = clock.perf_ns()
        CURRENT_TRACE.reset(trace_token)
        if response is not None:
            await _close_quietly(response)
    sample = _assemble(
        base, protocol, response, trace, t0_ns, headers_ns, end_ns, session, error, secrets, pinned_route
    )
    return sample if rules is None or session is None else _judge(sample, session, rules, secrets)


def _judge(sample: Sample, session: StreamSession, rules: AnswerRules, secrets: Iterable[str]) -> Sample:
    """Checks, fingerprint and cost, after the timed part is over (nothing here delays a read)."""
    fields, failure = judge(sample, session.measurement.answer, rules)
    if failure is not None:
        # Timings stay in the sample; ok=false keeps them out of percentiles, as for every failure.
        failed = _failed(sample, ErrorKind.ASSERTION, f"{failure.check}: {failure.reason}", secrets)
        return replace(failed, failed_check=failure.check, **fields)
    return replace(sample, **fields) if fields else sample


def _assemble(
    base, protocol, response, trace, t0_ns, headers_ns, end_ns, session, error, secrets, pinned_route=None
) -> Sample:
    fields: dict = {
        "dns_ms": trace.dns_ms,
        "connect_ms": trace.connect_ms,
        "tls_ms": trace.tls_ms,
        "connection_reused": trace.connection_reused if headers_ns is not None or trace.connect_start_ns else None,
        "ttfb_ms": None if headers_ns is None else (headers_ns - t0_ns) / 1e6,
        "via_proxy": trace.via_proxy,
    }
    metrics = session.measurement.metrics(end_ns=end_ns) if session is not None else None
    if metrics is not None:
        fields.update(metrics.sample_fields())
    if response is not None:
        fields["http_status"] = response.status_code
        # The header's id when there is one, else the body's (the stream's or the error body's):
        # a failed request's id is what an SLA credit claim lists (monitor.protocols.request_ids).
        body_id = metrics.request_id if metrics is not None else base.request_id
        fields["request_id"] = protocol.request_id(response.headers, body_id)
        # Route truth: headers parsed here, once per response (an error response
        # too: a 429's remaining quota is the point), joined with the stream's naming,
        # and replacing the stream's own served_by / fingerprint in the sample.
        route = protocol.route_truth(
            response.headers,
            metrics.served_by if metrics else None,
            metrics.system_fingerprint if metrics else None,
            pinned_route,
        )
        processing = processing_ms_from(response.headers)
        if processing is not None:  # the provider's own time before its headers: attribution's "not the network"
            fields["server_timing"] = {**(fields.get("server_timing") or {}), "processing_ms": processing}
        fields.update(
            served_by=route.served_by,
            system_fingerprint=route.system_fingerprint,
            fallback=route.fallback,
            ratelimit_remaining_requests=route.ratelimit_remaining_requests,
            ratelimit_remaining_tokens=route.ratelimit_remaining_tokens,
        )
    if metrics is not None:
        if error is None:
            error = session.outcome()
            if error[0] is None:
                error = None
    else:
        fields["total_ms"] = (end_ns - t0_ns) / 1e6
    sample = replace(base, **fields)
    if error is None:
        return replace(sample, ok=True)
    return _failed(sample, error[0], error[1], secrets)


# Headers in which a provider says how long it worked before answering (OpenAI, Azure OpenAI and the
# gateways that pass them on); its share of the time to headers is the provider's, not the path's.
PROCESSING_HEADERS = ("openai-processing-ms", "x-processing-ms")


def processing_ms_from(headers) -> float | None:
    for name in PROCESSING_HEADERS:
        value = headers.get(name)
        if value:
            try:
                ms = float(value)
            except ValueError:
                continue
            if ms >= 0 and ms == ms and ms != float("inf"):
                return ms
    return None


def _failed(sample: Sample, kind: ErrorKind, message: str, secrets: Iterable[str]) -> Sample:
    text = redact(message, secrets)
    if len(text) > MAX_ERROR_MESSAGE_CHARS:
        text = text[: MAX_ERROR_MESSAGE_CHARS - 1] + "…"
    return replace(sample, ok=False, error_kind=str(kind), error_message=text)


def _transport_error(exc: httpx.HTTPError, headers_received: bool) -> tuple[ErrorKind, str]:
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        return ErrorKind.CONNECT, f"connect failed: {detail}"
    if isinstance(exc, httpx.DecodingError):
        return ErrorKind.PROTOCOL, f"undecodable body: {detail}"
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return ErrorKind.CLIENT_ERROR, detail
    if headers_received:
        return ErrorKind.TRUNCATED, f"connection lost mid-stream: {detail}"
    if isinstance(exc, httpx.RemoteProtocolError) and "disconnected" not in detail.lower():
        return ErrorKind.PROTOCOL, f"malformed HTTP response: {detail}"
    return ErrorKind.CONNECT, f"connection lost before a response: {detail}"


async def _read_capped(response: httpx.Response) -> bytes:
    body = bytearray()
    try:
        async for data in response.aiter_bytes():
            body += data
            if len(body) >= MAX_ERROR_BODY_BYTES:
                break
    except httpx.HTTPError:
        pass  # the status already tells the story
    return bytes(body[:MAX_ERROR_BODY_BYTES])


def _http_error_text(protocol: WireProtocol, response: httpx.Response, body: bytes) -> str:
    text = protocol.error_message(response.status_code, body)
    retry_after = response.headers.get("retry-after")
    if response.status_code == 429 and retry_after:
        text += f" (retry-after {retry_after})"
    return text


def _content_type_text(protocol: WireProtocol, response: httpx.Response, body: bytes) -> str:
    content_type = response.headers.get("content-type") or "none"
    hint = " (HTML page)" if body.lstrip()[:15].lower().startswith((b"<!doctype", b"<html")) else ""
    return f"unexpected content-type {content_type}{hint} for {protocol.name}"


async def _close_quietly(response: httpx.Response) -> None:
    # Closing a broken connection may fail again; there is nothing to report.
    with contextlib.suppress(Exception):
        await response.aclose()


def _is_credentials_error(exc: Exception) -> bool:
    name = type(exc).__name__
    return "Credential" in name or "credential" in str(exc).lower()
