"""`firsttoken routes`: rank every route of each canonical model and prompt (DESIGN §10).

    firsttoken routes [--model M] [--prompt P] [--window 30m] [--min-availability 99%]
                      [--by ttft|tps|cost] [--json | --format openrouter | --format litellm]

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
    p.add_argument("--by", choices=("ttft", "tps", "cost"), default="ttft", help="order within a tier (default ttft)")
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
    except RouteParamError as exc:
        raise UsageError(f"firsttoken routes: --{exc}") from None
    try:
        with migrated_engine(args) as engine:
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
    except SchemaNotReady as exc:
        print(f"firsttoken: {exc}", file=sys.stderr)
        return 1
    out = sys.stdout
    fmt = getattr(args, "format", None)
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
