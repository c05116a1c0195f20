"""The simulated provider server: routing, auth, HTTP faults, then the stream.

One `Simulator` serves every protocol on one port; the path picks the
protocol as it does at the real providers. An optional `/region/{name}`
path prefix names a region (as does Vertex's `locations/{l}`), so one
process can play several regions of a provider.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import random
import secrets
import time
import weakref
from dataclasses import replace
from urllib.parse import unquote

from monitor.probe.tokens import count_o200k, o200k
from monitor.simulator import control
from monitor.simulator.behaviour import BehaviourError
from monitor.simulator.catalogue import BehaviourSource, Catalogue
from monitor.simulator.http import Connection
from monitor.simulator.plan import StreamPlan, estimate_prompt_tokens, make_plan
from monitor.simulator.prefix_cache import PrefixCache, cache_tokens
from monitor.simulator.request import HttpError, Request
from monitor.simulator.stream import Sleeper, StreamRunner, sleeper_for
from monitor.simulator.truth import TruthRecord, TruthStore
from monitor.simulator.wire import Call, StreamInfo, WireEncoder, find_route
from monitor.simulator.wire.base import ERROR_MESSAGES, route_options

REGION_PREFIX = "/region/"

HTML_PAGE = (
    b"<!DOCTYPE html>\n<html><head><title>Service temporarily unavailable</title></head>\n"
    b"<body><h1>Something went wrong</h1><p>The upstream service is temporarily unavailable. "
    b"Please try again in a few minutes.</p></body></html>\n"
)
HTML_502 = (
    b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    b"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
)
# fault → (status, or None for the protocol's own; error kind)
_HTTP_ERRORS = {
    "rate_limited": (429, "rate_limited"),
    "server_error": (500, "server_error"),
    "overloaded": (None, "overloaded"),
    "auth": (None, "auth"),
    "client_error": (400, "client_error"),
    "echo_key": (None, "auth"),
}


def _scripted_plan(plan: StreamPlan, call: Call, cls: type[WireEncoder]) -> StreamPlan:
    """A tool call or JSON document is as long as it is (max_tokens still cuts it); a protocol
    that sends tool calls whole sends them in one chunk."""
    assert call.answer is not None
    tokens = len(call.answer.pieces)
    finish = "stop"
    if call.max_tokens is not None and plan.reasoning_tokens + tokens > call.max_tokens:
        tokens, finish = max(1, call.max_tokens - plan.reasoning_tokens), "length"
    per_chunk = tokens if call.answer.tool is not None and cls.whole_tool_calls else plan.tokens_per_chunk
    after = min(plan.fault_after_tokens, plan.reasoning_tokens + tokens)
    return replace(plan, answer_tokens=tokens, finish=finish, tokens_per_chunk=per_chunk, fault_after_tokens=after)


def split_region(path: str) -> tuple[str | None, str]:
    """`/region/eu-west-1/v1/messages` → ("eu-west-1", "/v1/messages")."""
    if path.startswith(REGION_PREFIX):
        region, sep, rest = path[len(REGION_PREFIX) :].partition("/")
        if region and sep:
            return unquote(region), "/" + rest
    return None, path


class Simulator:
    def __init__(
        self,
        catalogue: Catalogue | None = None,
        *,
        source: BehaviourSource | None = None,
        truth: TruthStore | None = None,
        api_key: str | None = None,
        seed: int | None = None,
    ) -> None:
        self.catalogue = catalogue if catalogue is not None else Catalogue()
        self.source: BehaviourSource = source if source is not None else self.catalogue
        self.truth = truth if truth is not None else TruthStore()  # (an empty store is falsy)
        self.api_key = api_key
        self.rng = random.Random(seed)
        self.prefix_cache = PrefixCache()  # the simulated providers' prompt caches (DESIGN §13)
        self.started_s = time.time()
        self.requests = 0
        self.active_streams = 0
        self._ids = itertools.count(1)
        self._boot = secrets.token_hex(4)
        self._sleep: Sleeper | None = None
        self._connections: weakref.WeakSet[Connection] = weakref.WeakSet()
        self._server: asyncio.Server | None = None

    # ------------------------------------------------------------ lifecycle
    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        """Listen; return the bound port."""
        loop = asyncio.get_running_loop()
        self._sleep = sleeper_for(loop)
        # The prompt-token counter loads in ~1 s of CPU: before listening, so it neither stalls
        # the first request nor competes with timed streams for the GIL.
        await loop.run_in_executor(None, o200k)
        self._server = await loop.create_server(self._new_connection, host, port, backlog=2048, reuse_address=True)
        return self._server.sockets[0].getsockname()[1]

    def _new_connection(self) -> Connection:
        conn = Connection(self.handle)
        self._connections.add(conn)
        return conn

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for conn in list(self._connections):
            conn.abort()
        if self._server is not None:
            await self._server.wait_closed()
        self.truth.close()

    def new_request_id(self) -> str:
        return f"req_{self._boot}{next(self._ids):012x}"

    # ------------------------------------------------------------ requests
    async def handle(self, conn: Connection, req: Request) -> None:
        if req.path.startswith(control.PREFIX):
            control.handle(self, conn, req)
            return
        self.requests += 1
        request_id = self.new_request_id()
        region, path = split_region(req.path)
        found = find_route(req.method, path)
        if found is None:
            message = f"Unknown request URL: {req.method} {path}"
            conn.send_json(404, {"error": {"message": message, "type": "not_found"}}, [("x-request-id", request_id)])
            return
        cls, params = found
        if req.method != "POST":
            self._error(
                conn, cls, request_id, 405, "client_error", f"method {req.method} not allowed", [("allow", "POST")]
            )
            return
        try:
            call = cls.read_call(req, params)
        except HttpError as exc:
            self._error(conn, cls, request_id, exc.status, "client_error", exc.message)
            return
        rec = TruthRecord(request_id, cls.protocol, call.model, req.arrival_ns, region=region or call.region)
        # Lets tests see whether two requests carried the same prompt (cache busting).
        rec.body_sha256 = hashlib.sha256(req.body).hexdigest()
        self.truth.add(rec)
        try:
            await self._answer(conn, cls, call, rec)
        finally:
            rec.end_ns = time.perf_counter_ns()
            self.truth.finish(rec)

    async def _answer(self, conn: Connection, cls: type[WireEncoder], call: Call, rec: TruthRecord) -> None:
        rid = rec.request_id
        if cls.requires_credentials and call.api_key is None:  # Bedrock: no SigV4 or bearer
            self._fail(conn, cls, rec, 403, "auth", "Missing or invalid Authorization header (SigV4).")
            return
        if self.api_key is not None and call.verify_key and call.api_key != self.api_key:
            self._fail(conn, cls, rec, cls.auth_status, "auth", "Invalid API key.")
            return
        try:
            behaviour = self.source.behaviour_for(call.model, rec.region, time.time())
        except BehaviourError as exc:
            self._fail(conn, cls, rec, 400, "client_error", f"invalid model {call.model!r}: {exc}")
            return
        # Usage echoes the prompt's size as o200k tokens (synthetic prompts are sized in them).
        prompt_tokens = count_o200k(call.prompt_text) if call.prompt_text else estimate_prompt_tokens(call.prompt_chars)
        scope = f"{call.model}@{rec.region}"
        read, written = cache_tokens(
            self.prefix_cache, cls.explicit_cache, call, behaviour, scope, time.time(), count_o200k
        )
        plan = make_plan(behaviour, prompt_tokens, call.max_tokens, rec.region, self.rng, cached_tokens=read)
        if call.answer is not None and plan.answer_tokens > 0:
            plan = _scripted_plan(plan, call, cls)
        rec.fault = plan.fault
        rec.prompt_tokens = prompt_tokens
        rec.planned_ttft_ms = plan.ttft_ns / 1e6
        if plan.fault in _HTTP_ERRORS:
            status, kind = _HTTP_ERRORS[plan.fault]
            if status is None:
                status = cls.overloaded_status if kind == "overloaded" else cls.auth_status
            if plan.fault == "echo_key":  # quoted in full, as careless gateways do: the probe must redact it
                key = call.api_key or ""
                message = f"Incorrect API key provided: {key}. You can find your API key in your account settings."
            else:
                message = ERROR_MESSAGES[kind]
            extra = [("retry-after", "2")] if plan.fault == "rate_limited" else []
            self._fail(conn, cls, rec, status, kind, message, [*extra, *cls.route_headers(behaviour)])
            return
        if plan.fault in ("html", "html_502"):
            rec.status = 200 if plan.fault == "html" else 502
            page = HTML_PAGE if plan.fault == "html" else HTML_502
            rec.headers_sent_ns = time.perf_counter_ns()
            conn.send(rec.status, "text/html; charset=utf-8", page, cls.response_headers(rid))
            return
        info = StreamInfo(
            request_id=rid,
            model=call.model,
            prompt_tokens=prompt_tokens,
            usage=behaviour.usage and call.include_usage,
            created_s=int(time.time()),
            options={**call.options, **route_options(behaviour), "reasoning": plan.reasoning_tokens > 0},
            cache_read_tokens=read,
            cache_write_tokens=written,
        )
        enc = cls(info)
        headers = [
            ("content-type", enc.media_type()),
            ("cache-control", "no-cache"),
            *cls.response_headers(rid),
            *cls.route_headers(behaviour),
        ]
        rec.status = 200
        assert self._sleep is not None
        self.active_streams += 1
        try:
            await StreamRunner(conn, enc, plan, rec, self._sleep, call.answer).run(headers)
        finally:
            self.active_streams -= 1

    def _fail(
        self,
        conn: Connection,
        cls: type[WireEncoder],
        rec: TruthRecord,
        status: int,
        kind: str,
        message: str,
        extra: list[tuple[str, str]] | None = None,
    ) -> None:
        rec.headers_sent_ns = time.perf_counter_ns()
        rec.status = self._error(conn, cls, rec.request_id, status, kind, message, extra)

    def _error(
        self,
        conn: Connection,
        cls: type[WireEncoder],
        request_id: str,
        status: int,
        kind: str,
        message: str,
        extra: list[tuple[str, str]] | None = None,
    ) -> int:
        body, headers = cls.error_body(status, kind, message, request_id)
        conn.send(status, "application/json", body, [*cls.response_headers(request_id), *headers, *(extra or [])])
        return status
