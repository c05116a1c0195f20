"""Running the simulator as a process: `serve()` and the `simulate` command line.

`monitor/cli.py` wires `firsttoken simulate` here (`add_arguments` +
`run_simulator`); `python -m monitor.simulator` uses the same code.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Sequence

from monitor.simulator.behaviour import BehaviourError
from monitor.simulator.catalogue import Catalogue, load_scenario
from monitor.simulator.server import Simulator
from monitor.simulator.truth import TruthStore

READY_LINE = "firsttoken simulator listening on http://{host}:{port}"


def build_simulator(
    scenario_path: str | None = None,
    truth_log: str | None = None,
    api_key: str | None = None,
    seed: int | None = None,
) -> Simulator:
    """A simulator from command-line style settings. Raises BehaviourError for a bad scenario."""
    catalogue = load_scenario(scenario_path) if scenario_path else Catalogue()
    return Simulator(catalogue, truth=TruthStore(log_path=truth_log), api_key=api_key, seed=seed)


async def serve(
    host: str,
    port: int,
    scenario_path: str | None = None,
    truth_log: str | None = None,
    api_key: str | None = None,
    seed: int | None = None,
) -> None:
    """Serve until cancelled or sent SIGINT/SIGTERM. Prints one ready line, flushed."""
    sim = build_simulator(scenario_path, truth_log, api_key, seed)
    bound = await sim.start(host, port)
    print(READY_LINE.format(host=host, port=bound), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread / Windows
            loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        await sim.stop()


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8400, help="port to listen on; 0 picks a free one (default 8400)")
    parser.add_argument("--scenario", metavar="FILE", help="YAML file: models: {name: {ttft_ms: …, …}}")
    parser.add_argument("--truth-log", metavar="FILE", help="append one JSON truth record per request (JSONL)")
    parser.add_argument("--api-key", metavar="KEY", help="accept only this API key (others get 401)")
    parser.add_argument("--seed", type=int, help="seed for jitter, spikes and random faults")
    return parser


def run_simulator(args: Sequence[str] | argparse.Namespace | None = None) -> int:
    """Run the simulator in the foreground; the exit code (2 for a bad scenario or usage)."""
    if not isinstance(args, argparse.Namespace):
        parser = add_arguments(
            argparse.ArgumentParser(prog="firsttoken simulate", description="Simulated LLM providers.")
        )
        args = parser.parse_args(args)
    try:
        # Fail on a bad scenario before the loop starts, with one line per problem.
        if args.scenario:
            load_scenario(args.scenario)
    except BehaviourError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    main = serve(args.host, args.port, args.scenario, args.truth_log, args.api_key, getattr(args, "seed", None))
    try:
        try:
            import uvloop
        except ImportError:  # Windows, or uvloop not installed
            asyncio.run(main)
        else:
            uvloop.run(main)
    except KeyboardInterrupt:
        pass
    except OSError as exc:  # port in use, address not available
        print(f"error: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    return 0
