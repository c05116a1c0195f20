"""`firsttoken silence add|list|expire`: mute notifications for a scope (DESIGN §5).

    firsttoken silence add --match provider=bedrock,region=eu-west-1 --for 2h --reason "maintenance"
    firsttoken silence add --match model=gpt-4o --until 2026-12-01T06:00:00Z --reason "known slow"
    firsttoken silence list [--all] [--json]
    firsttoken silence expire 12

Silences live in the database so every agent's leader sees them; the config
file's `silences:` are listed too, marked `config` (edit the file to change them).
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from datetime import UTC, datetime, timedelta

from monitor.errors import UsageError
from monitor.units import DURATION_HINT, parse_duration

MAX_SILENCE = timedelta(days=366)  # a forgotten "forever" silence hides real outages


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="silence_command", metavar="{add,list,expire}")
    add = sub.add_parser("add", help="silence notifications for a scope")
    add_span_arguments(add, "how long, e.g. 30m, 2h, 1d")
    add.add_argument("--reason", default="", help="why, for whoever wonders later")
    lst = sub.add_parser("list", help="list silences (active and upcoming; --all: ended ones too)")
    lst.add_argument("--all", action="store_true", help="include silences that have ended")
    lst.add_argument("--json", action="store_true", help="one JSON object per silence per line")
    exp = sub.add_parser("expire", help="end a database silence now")
    exp.add_argument("id", type=int)
    for child in (add, lst, exp):
        child.add_argument("--config", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        child.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def add_span_arguments(add: argparse.ArgumentParser, how_long: str) -> None:
    """`--match`, `--for` or `--until`, and `--starts`: what a silence or a maintenance window covers, and when."""
    add.add_argument("--match", required=True, help="labels to match: provider=X,model=Y,region=Z,prompt=W (globs)")
    until = add.add_mutually_exclusive_group(required=True)
    until.add_argument("--for", dest="duration", help=how_long)
    until.add_argument("--until", help="when it ends, ISO 8601 (UTC if no offset)")
    add.add_argument("--starts", help="when it starts, ISO 8601 (default now)")


def parse_span(args: argparse.Namespace, now: datetime, command: str, what: str) -> tuple[datetime, datetime]:
    """(starts, ends) from `add_span_arguments`' flags: `--starts` (default now), then `--for` or
    `--until`; one that would already be over is a UsageError."""
    starts = parse_time(args.starts, "--starts", command) if args.starts else now
    if args.duration is not None:
        try:
            ends = starts + timedelta(seconds=parse_duration(args.duration))
        except ValueError:
            raise UsageError(f"firsttoken {command}: --for: {DURATION_HINT}") from None
    else:
        ends = parse_time(args.until, "--until", command)
    if ends <= max(starts, now):
        raise UsageError(f"firsttoken {command}: the {what} would already be over")
    return starts, ends


def parse_match(text: str, command: str = "silence", validate=None) -> dict[str, str]:
    """`--match provider=X,region=Y` of `firsttoken <command>`, checked by `validate` (a silence's rules
    by default); a problem is a one-line UsageError (exit 2)."""
    if validate is None:
        from monitor.alerts.silences import validate_match as validate

    match: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep:
            raise UsageError(f"firsttoken {command}: --match: expected label=value, got {part!r}")
        if key.strip() in match:
            raise UsageError(f"firsttoken {command}: --match: {key.strip()} given twice")
        match[key.strip()] = value.strip()
    try:
        validate(match)
    except ValueError as exc:
        raise UsageError(f"firsttoken {command}: --match: {exc}") from None
    return match


def parse_time(text: str, flag: str, command: str = "silence") -> datetime:
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"firsttoken {command}: {flag}: expected an ISO 8601 time like 2026-12-01T06:00:00Z") from None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def run(args: argparse.Namespace) -> int:
    action = getattr(args, "silence_command", None)
    if action not in ("add", "list", "expire"):
        raise UsageError("firsttoken silence: expected add, list or expire")
    from monitor.commands.db import SchemaNotReady

    now = datetime.now(UTC)
    try:
        if action == "add":
            return _add(args, now)
        engine, config_silences = _open(args)
    except SchemaNotReady as exc:
        print(f"firsttoken: {exc}", file=sys.stderr)
        return 1
    try:
        if action == "list":
            return _list(engine, config_silences, now, show_all=args.all, as_json=args.json)
        return _expire(engine, args.id, now)
    finally:
        engine.dispose()


def _open(args: argparse.Namespace):
    from monitor.commands.db import config_section, open_migrated

    return open_migrated(args), config_section(args, "silences")


def _add(args: argparse.Namespace, now: datetime) -> int:
    from monitor.alerts.silences import add_silence

    match = parse_match(args.match)
    starts, ends = parse_span(args, now, "silence", "silence")
    if ends - starts > MAX_SILENCE:
        raise UsageError("firsttoken silence: at most 366 days; silence again later if it is still needed")
    engine, _ = _open(args)
    try:
        with engine.begin() as conn:
            silence_id = add_silence(
                conn, match, starts_at=starts, ends_at=ends, reason=args.reason, created_by=_user(), now=now
            )
    finally:
        engine.dispose()
    print(f"silence {silence_id} added: {_match_text(match)} until {_iso(ends)}")
    return 0


def _list(engine, config_silences, now: datetime, *, show_all: bool, as_json: bool) -> int:
    from monitor.alerts.silences import from_config, load_db_silences

    with engine.connect() as conn:
        every = [*from_config(config_silences), *load_db_silences(conn, None if show_all else now)]
    if not show_all:
        every = [s for s in every if s.ends_at > now]
    if as_json:
        for s in every:
            state = "active" if s.active(now) else ("ended" if s.ends_at <= now else "upcoming")
            item = {
                "id": s.id,
                "source": s.source,
                "match": dict(s.match),
                "starts_at": _iso(s.starts_at),
                "ends_at": _iso(s.ends_at),
                "state": state,
                "reason": s.reason,
                "created_by": s.created_by,
            }
            print(json.dumps(item))
        return 0
    if not every:
        print("no silences")
        return 0
    print(f"{'id':>6}  {'source':8}  {'state':8}  {'ends_at':20}  {'match':40}  reason")
    for s in every:
        state = "active" if s.active(now) else ("ended" if s.ends_at <= now else "upcoming")
        ident = str(s.id) if s.id is not None else "-"
        print(f"{ident:>6}  {s.source:8}  {state:8}  {_iso(s.ends_at):20}  {_match_text(s.match):40}  {s.reason}")
    return 0


def _expire(engine, silence_id: int, now: datetime) -> int:
    from monitor.alerts.silences import expire_silence

    with engine.begin() as conn:
        result = expire_silence(conn, silence_id, now)
    if result is None:
        print(
            f"firsttoken silence: no silence {silence_id} (config silences are changed in the config file)",
            file=sys.stderr,
        )
        return 1
    print(f"silence {silence_id} {'expired' if result else 'had already ended'}")
    return 0


def _match_text(match) -> str:
    return ",".join(f"{k}={v}" for k, v in match.items())


def _iso(value: datetime | None) -> str:
    return "-" if value is None else value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _user() -> str | None:
    try:
        return getpass.getuser()
    except Exception:  # no passwd entry in a container
        return None
