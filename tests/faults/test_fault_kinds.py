"""Every simulator fault, through every protocol, lands in the same `error_kind`,
and no fault stalls the event loop the other probes share.

Alerting and availability group by `error_kind`, so one condition must read
the same whichever wire format reported it.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from monitor.eventloop import run_async
from monitor.probe.runner import probe_target
from monitor.probe.transport.lanes import ClientLanes, warm_up
from monitor.protocols import protocol_names
from tests.faults.kinds import FAULT_KINDS

# Ollama's in-stream errors are free text; a rate limit there arrives as HTTP 503.
EXCEPTIONS = {("ollama", "throttle_stream"): "stream_error"}
LOOP_GAP_LIMIT_S = 0.1


def fault_target(make_target, protocol: str, fault: str):
    return make_target(f"sim:ttft=20:itl=2:tokens=8:fault={fault}", protocol, ttft_timeout="2s", timeout="4s")


def test_every_fault_has_one_error_kind_in_every_protocol(make_target):
    # huge_line has its own test below: seven 10 MB streams at once would make
    # the one simulator process, not the probes, the thing being measured.
    faults = [f for f in FAULT_KINDS if f != "huge_line"]
    targets = [(p, f, fault_target(make_target, p, f)) for p in protocol_names() for f in faults]

    async def main():
        await warm_up()
        async with ClientLanes() as lanes:

            async def one(target):
                async with lanes.lane(target.base_url) as client:
                    return await probe_target(client, target)

            return await asyncio.gather(*(one(t) for _, _, t in targets))

    samples = run_async(main())
    wrong = {
        (p, f): (s.error_kind, s.error_message)
        for (p, f, _), s in zip(targets, samples, strict=True)
        if s.ok or s.error_kind != EXCEPTIONS.get((p, f), FAULT_KINDS[f])
    }
    assert not wrong, wrong


@pytest.mark.parametrize("protocol", protocol_names())
def test_a_huge_line_never_stalls_the_event_loop(make_target, protocol):
    # Regression: a 10 MB line or frame held the loop for 0.2 s (SSE line
    # splitting) to 19 s (Bedrock: the whole frame through tiktoken), delaying
    # every other probe in flight. The best of three runs, so a busy machine
    # stealing the CPU once does not fail the test.
    target = fault_target(make_target, protocol, "huge_line")

    async def worst_gap() -> tuple[float, str]:
        gaps = [0.0]

        async def ticker():
            last = time.perf_counter()
            while True:
                await asyncio.sleep(0.001)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        tick = asyncio.create_task(ticker())
        async with ClientLanes() as lanes, lanes.lane(target.base_url) as client:
            sample = await probe_target(client, target)
        tick.cancel()
        return max(gaps), sample.error_kind

    async def main():
        await warm_up()
        return [await worst_gap() for _ in range(3)]

    runs = run_async(main())
    assert all(kind == "protocol" for _, kind in runs), runs
    assert min(gap for gap, _ in runs) < LOOP_GAP_LIMIT_S, runs
