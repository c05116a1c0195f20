"""`firsttoken maintenance add|list|end|export`: planned work (DESIGN §16).

    firsttoken maintenance add --match provider=openai --for 30m --note "Rotating keys"
    firsttoken maintenance add --match provider=openai,region=eu --starts 2026-12-01T06:00:00Z \\
        --until 2026-12-01T07:00:00Z --note "EU failover drill"
    firsttoken maintenance list [--all] [--days 7] [--json]
    firsttoken maintenance end 12
    firsttoken maintenance export --alertmanager

Windows added here live in the database, like silences, so every leader sees them at its next
round: pages of the scope are muted (`muted: maintenance`), probes go on and are marked, SLO budgets
leave them out. The config file's `maintenance:` windows (one-off or RRULE) are listed too, each
occurrence marked `config` (edit the file to change them), and so are the providers' own scheduled
maintenances read from their status pages (`provider`: shown, never muting).
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime, timedelta

from monitor.commands.silence import _iso, _match_text, _user, add_span_arguments, parse_match, parse_span
from monitor.errors import UsageError

PROG = "maintenance"
MAX_WINDOW = timedelta(days=31)  # planned work longer than a month is an outage by another name
ACTIONS = ("add", "list", "end", "export")


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="maintenance_command", metavar="{add,list,end,export}")
    add = sub.add_parser("add", help="add a maintenance window: mute pages of a scope, mark its probes")
    add_span_arguments(add, "how long, e.g. 30m, 2h")
    add.add_argument("--note", required=True, help="what is being done (shown on the status site)")
    add.add_argument("--name", help="a short name (default: the match)")
    lst = sub.add_parser("list", help="list maintenance windows: active and upcoming (--all: ended ones too)")
    lst.add_argument("--all", action="store_true", help="include windows that have ended")
    lst.add_argument("--days", type=float, default=7.0, help="how far ahead config windows are listed (default 7)")
    lst.add_argument("--json", action="store_true", help="one JSON object per window per line")
    end = sub.add_parser("end", help="end a window added with `maintenance add` now (cancel it if not begun)")
    end.add_argument("id", type=int)
    exp = sub.add_parser("export", help="print the windows for another tool")
    exp.add_argument("--alertmanager", action="store_true", required=True, help="as Alertmanager time_intervals (YAML)")
    for child in (add, lst, end, exp):
        child.add_argument("--config", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        child.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    action = getattr(args, "maintenance_command", None)
    if action not in ACTIONS:
        raise UsageError("firsttoken maintenance: expected add, list, end or export")
    from monitor.commands.db import SchemaNotReady

    now = datetime.now(UTC)
    if action == "add":
        window = _parse_add(args, now)  # usage errors before the database is opened
    if action == "list" and not args.days >= 0:
        raise UsageError("firsttoken maintenance: --days must be 0 or more")
    try:
        engine, config_windows = _open(args)
    except SchemaNotReady as exc:
        print(f"firsttoken: {exc}", file=sys.stderr)
        return 1
    try:
        if action == "add":
            return _add(engine, window, now)
        if action == "list":
            return _list(engine, config_windows, now, show_all=args.all, days=args.days, as_json=args.json)
        if action == "end":
            return _end(engine, args.id, now)
        return _export(engine, config_windows, now)
    finally:
        engine.dispose()


def _open(args: argparse.Namespace):
    from monitor.commands.db import config_section, open_migrated

    return open_migrated(args), config_section(args, "maintenance")


def _parse_add(args: argparse.Namespace, now: datetime) -> dict:
    from monitor.maintenance.store import validate_match

    match = parse_match(args.match, PROG, validate_match)
    starts, ends = parse_span(args, now, PROG, "window")
    if ends - starts > MAX_WINDOW:
        raise UsageError("firsttoken maintenance: at most 31 days; add another window if the work goes on")
    if not args.note.strip():
        raise UsageError("firsttoken maintenance: --note: say what is being done (the status site shows it)")
    return dict(match=match, starts_at=starts, ends_at=ends, note=args.note.strip(), name=args.name)


def _add(engine, window: dict, now: datetime) -> int:
    from monitor.maintenance.store import add_window

    with engine.begin() as conn:
        window_id = add_window(conn, created_by=_user(), now=now, **window)
    state = "now" if window["starts_at"] <= now else f"from {_iso(window['starts_at'])}"
    print(f"maintenance {window_id} added: {_match_text(window['match'])} {state} until {_iso(window['ends_at'])}")
    return 0


def _list(engine, config_windows, now: datetime, *, show_all: bool, days: float, as_json: bool) -> int:
    from monitor.maintenance.store import load_db_windows
    from monitor.maintenance.windows import expand

    ahead = now + timedelta(days=days)
    with engine.connect() as conn:
        stored = load_db_windows(conn, None if show_all else now)
    every = sorted(
        [*expand(config_windows, now, ahead), *stored], key=lambda w: (w.starts_at, w.source, w.id or 0, w.name)
    )
    if as_json:
        for w in every:
            print(json.dumps(w.to_dict(now)))
        return 0
    if not every:
        print("no maintenance windows")
        return 0
    print(f"{'id':>6}  {'source':8}  {'state':8}  {'starts_at':20}  {'ends_at':20}  {'match':32}  note")
    for w in every:
        ident = str(w.id) if w.id is not None else "-"
        print(
            f"{ident:>6}  {w.source:8}  {w.state(now):8}  {_iso(w.starts_at):20}  {_iso(w.ends_at):20}  "
            f"{_match_text(w.match):32}  {w.note or w.name}"
        )
    return 0


def _end(engine, window_id: int, now: datetime) -> int:
    from monitor.maintenance.store import ProviderWindowError, end_window

    try:
        with engine.begin() as conn:
            result = end_window(conn, window_id, now)
    except ProviderWindowError as exc:
        print(f"firsttoken maintenance: {exc}", file=sys.stderr)
        return 1
    if result is None:
        print(
            f"firsttoken maintenance: no window {window_id} (config windows are changed in the config file)",
            file=sys.stderr,
        )
        return 1
    said = {"ended": "ended", "cancelled": "cancelled (it had not begun)", "over": "had already ended"}
    print(f"maintenance {window_id} {said[result]}")
    return 0


def _export(engine, config_windows, now: datetime) -> int:
    from monitor.maintenance.alertmanager import render, time_intervals
    from monitor.maintenance.store import load_db_windows

    with engine.connect() as conn:
        stored = load_db_windows(conn, now)
    sys.stdout.write(render(time_intervals(config_windows, stored, now), now))
    return 0
