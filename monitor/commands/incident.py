"""`firsttoken incident list|show|publish|update|resolve`: the status site's incidents (DESIGN §16).

    firsttoken incident list [--open] [--json]
    firsttoken incident show 12 [--json]
    firsttoken incident publish 12                      # the incident and every draft update it holds
    firsttoken incident update 12 --message "A fix is rolling out" [--state monitoring]
    firsttoken incident resolve 12 [--message "All good since 14:05 UTC"]

Incidents are drafted by the leader's alert rounds from confirmed pages; with `status_site.publish:
manual` they wait for `publish`. An update to a published incident is published at once (subscribers
hear of it); one to a draft waits for `publish` with the rest. Exit codes: 0 done, 1 no such incident
(or already resolved, or the database not ready), 2 bad usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime

from monitor.commands.silence import _iso, _user
from monitor.errors import UsageError

STATES = ("investigating", "identified", "monitoring", "resolved")


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="incident_command", metavar="{list,show,publish,update,resolve}")
    lst = sub.add_parser("list", help="the newest incidents, drafts included")
    lst.add_argument("--open", action="store_true", help="only those not resolved")
    lst.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    lst.add_argument("--json", action="store_true", help="one JSON object per incident per line")
    show = sub.add_parser("show", help="one incident: its updates and alerts")
    show.add_argument("id", type=int)
    show.add_argument("--json", action="store_true", help="as one JSON object")
    pub = sub.add_parser("publish", help="publish an incident and its draft updates")
    pub.add_argument("id", type=int)
    upd = sub.add_parser("update", help="post an update (and set the state)")
    upd.add_argument("id", type=int)
    upd.add_argument("--message", required=True, help="what the public reads")
    upd.add_argument("--state", choices=STATES, help="the incident's state from now on")
    res = sub.add_parser("resolve", help="resolve an incident by hand")
    res.add_argument("id", type=int)
    res.add_argument("--message", help='what the public reads (default "Resolved.")')
    for child in (lst, show, pub, upd, res):
        child.add_argument("--config", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        child.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    action = getattr(args, "incident_command", None)
    if action not in ("list", "show", "publish", "update", "resolve"):
        raise UsageError("firsttoken incident: expected list, show, publish, update or resolve")
    if action == "update" and not args.message.strip():
        raise UsageError("firsttoken incident update: --message must say something")
    if action == "list" and args.limit < 1:
        raise UsageError("firsttoken incident list: --limit must be at least 1")
    from monitor.commands.db import SchemaNotReady, open_migrated
    from monitor.incidents.store import IncidentNotFound

    try:
        engine = open_migrated(args, read_only=action in ("list", "show"))
    except SchemaNotReady as exc:
        print(f"firsttoken: {exc}", file=sys.stderr)
        return 1
    try:
        return _ACTIONS[action](engine, args, datetime.now(UTC))
    except IncidentNotFound as exc:
        print(f"firsttoken incident: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:  # already resolved, a message too long
        print(f"firsttoken incident: {exc}", file=sys.stderr)
        return 1
    finally:
        engine.dispose()


def _list(engine, args: argparse.Namespace, now: datetime) -> int:
    from monitor.incidents.views import list_incidents

    with engine.connect() as conn:
        incidents = list_incidents(conn, limit=args.limit, open_only=args.open)
    if args.json:
        for i in incidents:
            print(json.dumps(i.as_json(with_alerts=False)))
        return 0
    if not incidents:
        print("no incidents")
        return 0
    print(f"{'id':>5}  {'status':9}  {'state':13}  {'started (UTC)':20}  {'provider':12}  title")
    for i in incidents:
        drafts = (
            f"  [{i.drafts} draft update{'s' if i.drafts != 1 else ''}]" if i.drafts and i.status == "published" else ""
        )
        print(f"{i.id:>5}  {i.status:9}  {i.state:13}  {_iso(i.started_at):20}  {i.provider:12}  {i.title}{drafts}")
    return 0


def _show(engine, args: argparse.Namespace, now: datetime) -> int:
    from monitor.incidents.store import IncidentNotFound
    from monitor.incidents.views import get_incident

    with engine.connect() as conn:
        incident = get_incident(conn, args.id)
    if incident is None:
        raise IncidentNotFound(args.id)
    if args.json:
        print(json.dumps(incident.as_json()))
        return 0
    print(f"incident {incident.id}: {incident.title}")
    waiting = (
        f" ({incident.drafts} not published: firsttoken incident publish {incident.id})" if incident.drafts else ""
    )
    print(f"  status      {incident.status}{waiting}")
    print(f"  state       {incident.state}")
    print(f"  provider    {incident.provider}")
    print(f"  components  {', '.join(incident.components)}")
    print(f"  started     {_iso(incident.started_at)}")
    print(f"  resolved    {_iso(incident.resolved_at)}")
    if incident.official_id:
        print(f"  provider's own incident  {incident.official_id}")
    print("updates:")
    for u in incident.updates:
        mark = "" if u.published else "  [draft]"
        by = f" (by {u.created_by})" if u.created_by else ""
        print(f"  {_iso(u.at)}  {u.kind:10}  {u.state:13}  {u.message}{by}{mark}")
    if incident.alerts:
        print("alerts:")
        for a in incident.alerts:
            print(f"  {a.rule}  {a.scope_key}  fired {_iso(a.fired_at)}  {a.state}")
    return 0


def _publish(engine, args: argparse.Namespace, now: datetime) -> int:
    from monitor.incidents.store import publish

    with engine.begin() as conn:
        count = publish(conn, args.id, now)
    print(f"incident {args.id} published ({count} update{'s' if count != 1 else ''} made public)")
    return 0


def _update(engine, args: argparse.Namespace, now: datetime) -> int:
    from monitor.incidents.store import post_update

    with engine.begin() as conn:
        update_id = post_update(conn, args.id, args.message, now=now, state=args.state, created_by=_user())
    print(f"incident {args.id}: update {update_id} posted")
    return 0


def _resolve(engine, args: argparse.Namespace, now: datetime) -> int:
    from monitor.incidents.store import resolve

    with engine.begin() as conn:
        resolve(conn, args.id, now=now, message=args.message, created_by=_user())
    print(f"incident {args.id} resolved")
    return 0


_ACTIONS = {"list": _list, "show": _show, "publish": _publish, "update": _update, "resolve": _resolve}
