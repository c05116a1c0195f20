"""One simulated response as a pure timeline: status, headers and timed byte pieces.

The live server (`server.py` + `stream.py`) plays a plan onto a socket,
sleeping to each deadline. The demo's backfill needs the very same bytes at
the very same offsets without sleeping, so it asks here instead: same route
lookup, same behaviour source, same `make_plan`, same wire encoders. Nothing
here reads a clock or touches a socket; times are offsets in nanoseconds from
the request's arrival.

Faults that need a live socket to mean anything are mapped to what a client
would observe: `hang` ends with one byte stamped far in the future (any
deadline passes first), `reset` ends the body with a read error. `huge_line`
and `trickle` exist to attack a real socket and are refused.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

from monitor.simulator.behaviour import BehaviourError
from monitor.simulator.catalogue import BehaviourSource
from monitor.simulator.plan import StreamPlan, estimate_prompt_tokens, make_plan
from monitor.simulator.prefix_cache import PrefixCache, cache_tokens
from monitor.simulator.request import HttpError, Request
from monitor.simulator.server import _HTTP_ERRORS, HTML_502, HTML_PAGE, split_region
from monitor.simulator.stream import BREAKING, INJECTED, chunk_bytes
from monitor.simulator.text import ANSWER_PIECES, REASONING_PIECES, token_text
from monitor.simulator.wire import StreamInfo, WireEncoder, find_route
from monitor.simulator.wire.base import ERROR_MESSAGES, Outcome, route_options

HANG_NS = 10 * 86_400 * 10**9  # "never": past any probe timeout
_SOCKET_ONLY = frozenset({"huge_line", "trickle"})

Ending = Literal["complete", "reset", "hang"]


class UnsupportedFault(ValueError):
    """A fault that only makes sense against a real socket."""


@dataclass(frozen=True, slots=True)
class Piece:
    offset_ns: int  # from the request's arrival
    data: bytes


@dataclass(frozen=True, slots=True)
class Timeline:
    status: int
    headers: tuple[tuple[str, str], ...]
    headers_ns: int  # when the status line and headers leave
    pieces: tuple[Piece, ...]  # body bytes, in order; the first may share the headers' instant
    ending: Ending = "complete"
    plan: StreamPlan | None = None  # None for answers decided before planning (404, 400)
    model: str | None = None
    region: str | None = None
    first_token_ns: int | None = None  # offset of the first token-bearing piece: the truth for TTFT


def respond(
    req: Request,
    source: BehaviourSource,
    rng: random.Random,
    *,
    now_s: float,
    request_id: str,
    prefix_cache: PrefixCache | None = None,
) -> Timeline:
    """The simulator's answer to `req` arriving at wall time `now_s` (epoch seconds); `prefix_cache`
    plays the providers' prompt caches (in simulated time) as the live server does."""
    region, path = split_region(req.path)
    found = find_route(req.method, path)
    if found is None:
        body = b'{"error":{"message":"Unknown request URL","type":"not_found"}}'
        return _plain(404, "application/json", body, [("x-request-id", request_id)])
    cls, params = found
    if req.method != "POST":
        return _error(cls, request_id, 405, "client_error", f"method {req.method} not allowed")
    try:
        call = cls.read_call(req, params)
    except HttpError as exc:
        return _error(cls, request_id, exc.status, "client_error", exc.message)
    region = region or call.region
    if cls.requires_credentials and call.api_key is None:
        return _error(cls, request_id, 403, "auth", "Missing or invalid Authorization header (SigV4).")
    try:
        behaviour = source.behaviour_for(call.model, region, now_s)
    except BehaviourError as exc:
        return _error(cls, request_id, 400, "client_error", f"invalid model {call.model!r}: {exc}")
    prompt_tokens = estimate_prompt_tokens(call.prompt_chars)
    read, written = cache_tokens(
        prefix_cache, cls.explicit_cache, call, behaviour, f"{call.model}@{region}", now_s, _estimate_tokens
    )
    plan = make_plan(behaviour, prompt_tokens, call.max_tokens, region, rng, cached_tokens=read)
    where = {"plan": plan, "model": call.model, "region": region}
    if plan.fault in _SOCKET_ONLY:
        raise UnsupportedFault(f"fault {plan.fault!r} needs a real socket")
    if plan.fault in _HTTP_ERRORS:
        status, kind = _HTTP_ERRORS[plan.fault]
        if status is None:
            status = cls.overloaded_status if kind == "overloaded" else cls.auth_status
        message = ERROR_MESSAGES[kind]
        if plan.fault == "echo_key":
            message = f"Incorrect API key provided: {call.api_key or ''}."
        extra = [("retry-after", "2")] if plan.fault == "rate_limited" else []
        return _error(cls, request_id, status, kind, message, [*extra, *cls.route_headers(behaviour)], **where)
    if plan.fault in ("html", "html_502"):
        status, page = (200, HTML_PAGE) if plan.fault == "html" else (502, HTML_502)
        headers = cls.response_headers(request_id)
        return _plain(status, "text/html; charset=utf-8", page, headers, **where)
    info = StreamInfo(
        request_id=request_id,
        model=call.model,
        prompt_tokens=prompt_tokens,
        usage=behaviour.usage and call.include_usage,
        created_s=int(now_s),
        options={**call.options, **route_options(behaviour), "reasoning": plan.reasoning_tokens > 0},
        cache_read_tokens=read,
        cache_write_tokens=written,
    )
    return _stream(cls(info), request_id, tuple(cls.route_headers(behaviour)), **where)


def _estimate_tokens(text: str) -> int:
    # The backfill sizes prompts by characters (no tokenizer per probe), as prompt_tokens above.
    return estimate_prompt_tokens(len(text))


def _stream(enc: WireEncoder, request_id: str, route: tuple[tuple[str, str], ...] = (), **where) -> Timeline:
    """What `StreamRunner` plays, as (offset, bytes) pieces."""
    plan: StreamPlan = where["plan"]
    base = plan.fault_delay_ns if plan.fault == "slow_headers" else 0
    headers = (
        ("content-type", enc.media_type()),
        ("cache-control", "no-cache"),
        *type(enc).response_headers(request_id),
        *route,
    )
    fault = plan.fault
    pieces = [Piece(base, enc.open())]
    if fault == "hang":
        return Timeline(200, headers, base, (*pieces, Piece(HANG_NS, b"\n")), "hang", **where)
    sent = 0
    first_token_ns: int | None = None
    end_ns = base + plan.ttft_ns  # no tokens (empty): the end comes at TTFT
    struck = False
    for chunk in plan.chunks():
        end_ns = base + chunk.offset_ns
        if fault in BREAKING and sent >= plan.fault_after_tokens:
            return _broken(enc, headers, pieces, end_ns, first_token_ns, **where)
        text = token_text(REASONING_PIECES if chunk.reasoning else ANSWER_PIECES, chunk.start, chunk.tokens)
        due = fault in INJECTED and not struck and sent >= plan.fault_after_tokens
        data = chunk_bytes(enc, chunk.reasoning, text, chunk.tokens, fault, due)
        struck = struck or due
        pieces.append(Piece(end_ns, data))
        first_token_ns = end_ns if first_token_ns is None else first_token_ns
        sent += chunk.tokens
    if fault in BREAKING:
        return _broken(enc, headers, pieces, end_ns, first_token_ns, **where)
    if fault == "malformed" and not struck:
        pieces.append(Piece(end_ns, enc.malformed()))
    outcome = Outcome(
        finish=plan.finish,
        reasoning_tokens=plan.reasoning_tokens,
        answer_tokens=plan.answer_tokens,
        arrival_ns=0,
        first_token_ns=first_token_ns,
        last_token_ns=end_ns if first_token_ns is not None else None,
        end_ns=end_ns,
    )
    pieces.append(Piece(end_ns, enc.close(outcome)))
    return Timeline(200, headers, base, _nonempty(pieces), first_token_ns=first_token_ns, **where)


def _broken(enc, headers, pieces, at_ns, first_token_ns, **where) -> Timeline:
    fault = where["plan"].fault
    if fault == "reset":
        return Timeline(
            200, headers, pieces[0].offset_ns, _nonempty(pieces), "reset", first_token_ns=first_token_ns, **where
        )
    if fault != "truncate":
        pieces = [*pieces, Piece(at_ns, enc.stream_error(throttle=fault == "throttle_stream"))]
    return Timeline(200, headers, pieces[0].offset_ns, _nonempty(pieces), first_token_ns=first_token_ns, **where)


def _error(cls: type[WireEncoder], request_id, status, kind, message, extra=(), **where) -> Timeline:
    body, headers = cls.error_body(status, kind, message, request_id)
    return _plain(status, "application/json", body, [*cls.response_headers(request_id), *headers, *extra], **where)


def _plain(status: int, content_type: str, body: bytes, headers, **where) -> Timeline:
    all_headers = (("content-type", content_type), *headers)
    return Timeline(status, all_headers, 0, (Piece(0, body),), **where)


def _nonempty(pieces: list[Piece]) -> tuple[Piece, ...]:
    # An empty read means end-of-body to an HTTP client: never hand one out.
    return tuple(p for p in pieces if p.data)
