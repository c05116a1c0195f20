"""Play a `StreamPlan` onto a connection: tokens on time, faults as promised.

Each chunk is encoded before its deadline, then the clock is read and the
bytes written straight away, so `first_token_ns` is the instant the chunk
was handed to the kernel (TCP_NODELAY: it leaves at once).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from monitor.simulator.answers import Scripted
from monitor.simulator.http import Connection
from monitor.simulator.plan import StreamPlan
from monitor.simulator.text import ANSWER_PIECES, REASONING_PIECES, token_text
from monitor.simulator.truth import TruthRecord
from monitor.simulator.wire.base import Outcome, WireEncoder

HUGE_LINE_BYTES = 10 * 1024 * 1024
BREAKING = frozenset({"reset", "truncate", "stream_error", "throttle_stream"})
INJECTED = frozenset({"malformed", "invalid_utf8"})
_SLICE_NS = 500_000_000  # long waits are cut in slices to notice a vanished client

Sleeper = Callable[[int], Awaitable[None]]


def chunk_bytes(enc: WireEncoder, reasoning: bool, text: str, tokens: int, fault: str | None, due: bool) -> bytes:
    """One chunk on the wire, carrying its injected fault when one is due (live streams and timelines)."""
    if due and fault == "invalid_utf8":
        data = enc.corrupt_delta(reasoning, text, tokens)
    else:
        data = enc.delta(reasoning, text, tokens)
    if due and fault == "malformed":
        data = enc.malformed() + data
    return data


async def _sleep_until_uvloop(deadline_ns: int) -> None:
    # uvloop timers have 1 ms resolution against a cached clock, so they may
    # fire up to 1 ms early: sleep again for what is left.
    while (remaining := deadline_ns - time.perf_counter_ns()) > 300_000:
        await asyncio.sleep(remaining / 1e9)


async def _sleep_until_asyncio(deadline_ns: int) -> None:
    # The stdlib loop rounds epoll timeouts up to whole milliseconds, twice
    # (float), so its timers fire 1-2 ms late: ask for 1.5 ms less.
    remaining = deadline_ns - time.perf_counter_ns() - 1_500_000
    if remaining > 0:
        await asyncio.sleep(remaining / 1e9)


def sleeper_for(loop: asyncio.AbstractEventLoop) -> Sleeper:
    return _sleep_until_uvloop if type(loop).__module__.startswith("uvloop") else _sleep_until_asyncio


class StreamRunner:
    def __init__(
        self,
        conn: Connection,
        enc: WireEncoder,
        plan: StreamPlan,
        rec: TruthRecord,
        sleep: Sleeper,
        answer: Scripted | None = None,
    ) -> None:
        self.conn, self.enc, self.plan, self.rec, self._sleep = conn, enc, plan, rec, sleep
        self.answer = answer  # a tool call or JSON document instead of the cycled paragraph
        self._pieces = answer.pieces if answer is not None else ()
        # slow_headers shifts the whole answer back by its delay.
        self._base_ns = rec.arrival_ns + (plan.fault_delay_ns if plan.fault == "slow_headers" else 0)

    async def wait_until(self, deadline_ns: int) -> bool:
        """Sleep to `deadline_ns`; False if the client went away meanwhile."""
        while deadline_ns - time.perf_counter_ns() > _SLICE_NS and not self.conn.gone:
            await asyncio.sleep(_SLICE_NS / 1e9)
        if self.conn.gone:
            self.rec.client_gone = True
            return False
        await self._sleep(deadline_ns)
        if self.conn.gone:
            self.rec.client_gone = True
            return False
        return True

    def _start(self, headers: list[tuple[str, str]], body: bytes = b"") -> None:
        self.rec.headers_sent_ns = time.perf_counter_ns()
        self.conn.start_response(200, headers, body=body)

    async def run(self, headers: list[tuple[str, str]]) -> None:
        fault = self.plan.fault
        if fault == "slow_headers" and not await self.wait_until(self._base_ns):
            return
        if fault == "hang":
            self._start(headers)
            await self.conn.wait_closed()
            self.rec.client_gone = True
            return
        if fault == "trickle":
            self._start(headers)
            await self._trickle()
            return
        self._start(headers, self.enc.open())
        if fault == "huge_line":
            await self._huge_line()
            return
        await self._tokens()

    def _text(self, reasoning: bool, start: int, tokens: int) -> str:
        if self._pieces and not reasoning:
            return "".join(self._pieces[start : start + tokens])
        return token_text(REASONING_PIECES if reasoning else ANSWER_PIECES, start, tokens)

    def _stamp_tokens(self, t_ns: int, reasoning: bool, tokens: int) -> None:
        rec = self.rec
        if rec.first_token_ns is None:
            rec.first_token_ns = t_ns
        if not reasoning and rec.first_answer_ns is None:
            rec.first_answer_ns = t_ns
        rec.last_token_ns = t_ns
        rec.token_count += tokens
        if reasoning:
            rec.reasoning_tokens += tokens

    async def _tokens(self) -> None:
        plan, enc, conn = self.plan, self.enc, self.conn
        fault = plan.fault
        struck = False
        end_deadline = self._base_ns + plan.ttft_ns  # no tokens (empty): the end comes at TTFT
        for chunk in plan.chunks():
            deadline = end_deadline = self._base_ns + chunk.offset_ns
            if fault in BREAKING and self.rec.token_count >= plan.fault_after_tokens:
                if await self.wait_until(deadline):
                    self._break(fault)
                return
            text = self._text(chunk.reasoning, chunk.start, chunk.tokens)
            due = fault in INJECTED and not struck and self.rec.token_count >= plan.fault_after_tokens
            if self.answer is not None and self.answer.tool is not None and not chunk.reasoning:
                data = enc.tool_delta(self.answer.tool, text, first=chunk.start == 0)
            else:
                data = chunk_bytes(enc, chunk.reasoning, text, chunk.tokens, fault, due)
            struck = struck or due
            if not await self.wait_until(deadline):
                return
            t_ns = time.perf_counter_ns()
            conn.write_chunk(data)
            self._stamp_tokens(t_ns, chunk.reasoning, chunk.tokens)
        if fault in BREAKING:  # due after the last token
            if await self.wait_until(end_deadline):
                self._break(fault)
            return
        if fault == "malformed" and not struck:
            conn.write_chunk(enc.malformed())
        if not await self.wait_until(end_deadline):
            return
        self._finish()

    def _outcome(self, end_ns: int) -> Outcome:
        rec = self.rec
        return Outcome(
            finish=self.plan.finish,
            reasoning_tokens=rec.reasoning_tokens,
            answer_tokens=rec.token_count - rec.reasoning_tokens,
            arrival_ns=rec.arrival_ns,
            first_token_ns=rec.first_token_ns,
            last_token_ns=rec.last_token_ns,
            end_ns=end_ns,
        )

    def _finish(self) -> None:
        data = self.enc.close(self._outcome(time.perf_counter_ns()))
        self.conn.write_chunk(data)
        self.conn.end_chunks()
        self.rec.completed = True

    def _break(self, fault: str | None) -> None:
        if fault == "reset":
            self.conn.reset()
        elif fault == "truncate":
            self.conn.end_chunks()  # a clean end of the body, minus the terminal event
        else:
            self.conn.write_chunk(self.enc.stream_error(throttle=fault == "throttle_stream"))
            self.conn.end_chunks()

    async def _huge_line(self) -> None:
        if not await self.wait_until(self._base_ns + self.plan.ttft_ns):
            return
        for piece in self.enc.huge_line(HUGE_LINE_BYTES):
            if self.conn.gone:
                self.rec.client_gone = True
                return
            self.conn.write_chunk(piece)
            await self.conn.drain()
        self.conn.end_chunks()

    async def _trickle(self) -> None:
        """The whole valid stream, one byte per `fault_delay_ms` (default 1 s)."""
        enc, plan = self.enc, self.plan
        data = bytearray(enc.open())
        marks: list[tuple[int, bool, int]] = []  # (end offset of a token chunk, reasoning, tokens)
        for chunk in plan.chunks():
            data += enc.delta(chunk.reasoning, self._text(chunk.reasoning, chunk.start, chunk.tokens), chunk.tokens)
            marks.append((len(data), chunk.reasoning, chunk.tokens))
        arrival = self.rec.arrival_ns
        planned = Outcome(plan.finish, plan.reasoning_tokens, plan.answer_tokens, arrival, None, None, arrival)
        data += enc.close(planned)
        start_ns = time.perf_counter_ns()
        mark = 0
        for i in range(len(data)):
            if not await self.wait_until(start_ns + i * plan.fault_delay_ns):
                return
            t_ns = time.perf_counter_ns()
            self.conn.write_chunk(data[i : i + 1])
            while mark < len(marks) and marks[mark][0] == i + 1:
                self._stamp_tokens(t_ns, marks[mark][1], marks[mark][2])
                mark += 1
        self.conn.end_chunks()
        self.rec.completed = True
