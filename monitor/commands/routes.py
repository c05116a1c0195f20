"""`firsttoken routes`: rank every route of each canonical model and prompt (DESIGN §10).

    firsttoken routes [--model M] [--prompt P] [--window 30m] [--min-availability 99%]
                      [--by ttft|tps|cost] [--json | --format openrouter | --format litellm]
                      [--watch [EVERY]]

Routes at or above the availability floor come first, by p50 TTFT (or TPS,
or cost per 1,000 probes), the rest after them. `--json` prints one object per
route per line; `--format openrouter` a `provider: {order, ignore}` block per
model and prompt; `--format litellm` a router `model_list` with `order`.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime

from monitor.errors import UsageError
from monitor.routing.params import RouteParamError, parse_floor, parse_window


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", help="a canonical model name (or a provider's model id)")
    p.add_argument("--prompt", help="only this prompt")
    p.add_argument("--agent", metavar="NAME", help="as seen from this vantage point (probe agent) only")
    p.add_argument("--window", default="30m", help="how far back to measure, e.g. 30m, 6h, 7d (default 30m)")
    p.add_argument("--min-availability", default="99%", help="availability floor, e.g. 99%% or 0.99 (default 99%%)")
    p.add_argument(
        "--by",
        choices=("ttft", "tps", "cost", "warm_ttft"),
        default="ttft",
        help="order within a tier (default ttft; warm_ttft: cache probes' warm TTFT)",
    )
    p.add_argument(
        "--watch",
        nargs="?",
        const="15s",
        metavar="EVERY",
        help="poll every EVERY (default 15s) and print only what changed: routes new or gone, moved rank, "
        "or crossing the floor (--json: the changed routes' objects)",
    )
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="one JSON object per route per line")
    fmt.add_argument("--format", choices=("table", "openrouter", "litellm"), help="gateway routing config")


def run(args: argparse.Namespace) -> int:
    from monitor.commands.db import SchemaNotReady, migrated_engine
    from monitor.routing import formats
    from monitor.storage.queries.routes import load_routes

    try:
        window = parse_window(getattr(args, "window", None) or "30m")
        floor = parse_floor(getattr(args, "min_availability", None) or "99%")
        every_s = _every(getattr(args, "watch", None))
    except RouteParamError as exc:
        raise UsageError(f"firsttoken routes: --{exc}") from None
    fmt = getattr(args, "format", None)
    if every_s is not None and fmt in ("openrouter", "litellm"):
        raise UsageError("firsttoken routes: --watch prints the ranking's changes: use it with the table or --json")

    def rank(engine):
        ranked, _ = load_routes(
            engine,
            datetime.now(UTC),
            window,
            model=getattr(args, "model", None),
            prompt=getattr(args, "prompt", None),
            min_availability=floor,
            by=getattr(args, "by", None) or "ttft",
            agent=getattr(args, "agent", None) or None,
        )
        return ranked

    try:
        with migrated_engine(args, read_only=True) as engine:
            ranked = rank(engine)
            if every_s is not None:
                return _watch(engine, rank, ranked, every_s, as_json=getattr(args, "json", False))
    except SchemaNotReady as exc:
        print(f"firsttoken: {exc}", file=sys.stderr)
        return 1
    out = sys.stdout
    if getattr(args, "json", False):
        for r in ranked:
            out.write(json.dumps(formats.route_object(r)) + "\n")
    elif fmt == "openrouter":
        for block in formats.openrouter_blocks(ranked):
            out.write(json.dumps(block) + "\n")
    elif fmt == "litellm":
        import yaml

        out.write(yaml.safe_dump(formats.litellm_model_list(ranked), sort_keys=False))
    else:
        out.write("\n".join(formats.table_lines(ranked)) + "\n")
    return 0


def _every(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return parse_window(text).total_seconds()
    except RouteParamError:
        raise RouteParamError("watch: a poll interval such as 15s or 1m") from None


def _watch(engine, rank, ranked, every_s: float, *, as_json: bool) -> int:
    """The ranking once, then only its changes, until interrupted (Ctrl-C ends it with 0)."""
    import time

    from monitor.routing import formats
    from monitor.routing.watch import changes

    out = sys.stdout
    if as_json:
        for r in ranked:
            out.write(json.dumps(formats.route_object(r)) + "\n")
    else:
        out.write("\n".join(formats.table_lines(ranked)) + "\n")
    out.flush()
    try:
        while True:
            time.sleep(every_s)
            try:
                now = rank(engine)
            except Exception as exc:  # a database blip: say so, keep watching
                print(f"firsttoken: routes unavailable: {type(exc).__name__}", file=sys.stderr)
                continue
            stamp = datetime.now(UTC).strftime("%H:%M:%S")
            for change in changes(ranked, now):
                if as_json:
                    out.write(json.dumps({**formats.route_object(change.route), "change": change.kind}) + "\n")
                else:
                    out.write(f"{stamp} {change.line()}\n")
            out.flush()
            ranked = now
    except KeyboardInterrupt:
        return 0
