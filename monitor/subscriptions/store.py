"""Subscribers and their outbox (DESIGN §16): double opt-in, rate limits, one message per update.

- `subscribe`: a new (or returning) address gets a confirmation request queued, unless it asked too
  often: at most one request per address every CONFIRM_EVERY and CONFIRM_PER_DAY a day, and at most
  CONFIRMS_PER_HOUR for the whole site (nobody can make the status server mail-bomb an address, or
  anybody). A confirmed address is told nothing new. Whatever happened, the caller shows the same
  page: nobody learns from it who is subscribed.
- `confirm` / `unsubscribe`: what a signed link does (monitor/subscriptions/tokens.py); pending
  messages that no longer apply are cancelled in the same transaction.
- `fan_out`: each published incident update gets one outbox row per subscriber confirmed by the time
  it was published: unique (subscriber, update), so however often it runs, nobody hears twice. An
  update is fanned out once (`fanned_out`), and those published in the last RECHECK again, which
  catches a confirmation that committed while the update was being fanned out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection, bindparam, delete, func, literal, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from monitor.storage.models import IncidentUpdateRow, SubscriberOutboxRow, SubscriberRow, UTCDateTime
from monitor.subscriptions.addresses import address_key
from monitor.subscriptions.tokens import CONFIRM, CONFIRM_TTL, UNSUBSCRIBE, read_token

SUBSCRIBERS = SubscriberRow.__table__
OUTBOX = SubscriberOutboxRow.__table__
UPDATES = IncidentUpdateRow.__table__
PENDING, CONFIRMED, UNSUBSCRIBED = "pending", "confirmed", "unsubscribed"
CONFIRM_KIND, UPDATE_KIND = "confirm", "update"
SENT, FAILED, CANCELLED = "sent", "failed", "cancelled"

CONFIRM_EVERY = timedelta(minutes=10)
CONFIRM_PER_DAY = 5
CONFIRMS_PER_HOUR = 200
RECHECK = timedelta(minutes=10)
FORGET_UNCONFIRMED = CONFIRM_TTL  # an address never confirmed is deleted once its link expired
KEEP_MESSAGES = timedelta(days=90)  # settled outbox rows are kept this long, for the record


@dataclass(frozen=True, slots=True)
class Subscribed:
    outcome: str  # queued | limited | confirmed (already) | refused
    subscriber_id: int | None = None


def _insert(conn: Connection):
    return pg_insert if conn.dialect.name == "postgresql" else sqlite_insert


def subscribe(conn: Connection, kind: str, address: str, *, now: datetime, base_url: str | None) -> Subscribed:
    """Ask `address` (already validated) to confirm; see the module's docstring for the limits."""
    key = address_key(kind, address)
    conn.execute(
        _insert(conn)(SUBSCRIBERS)
        .values(kind=kind, address=address, address_key=key, state=PENDING, base_url=base_url, created_at=now)
        .on_conflict_do_nothing(index_elements=["kind", "address_key"])
    )
    row = conn.execute(select(SUBSCRIBERS).where(SUBSCRIBERS.c.kind == kind, SUBSCRIBERS.c.address_key == key)).one()
    if row.state == CONFIRMED:
        return Subscribed(CONFIRMED, row.id)
    last = row.last_confirm_request_at
    if last is not None and now - last < CONFIRM_EVERY:
        return Subscribed("limited", row.id)
    asked = row.confirm_requests if last is not None and now - last < timedelta(days=1) else 0
    if asked >= CONFIRM_PER_DAY:
        return Subscribed("limited", row.id)
    recent = conn.execute(
        select(func.count())
        .select_from(OUTBOX)
        .where(OUTBOX.c.kind == CONFIRM_KIND, OUTBOX.c.created_at >= now - timedelta(hours=1))
    ).scalar()
    if recent >= CONFIRMS_PER_HOUR:
        return Subscribed("limited", row.id)
    # Compare-and-set on the count: of two requests at once, one queues a mail.
    won = conn.execute(
        update(SUBSCRIBERS)
        .where(SUBSCRIBERS.c.id == row.id, SUBSCRIBERS.c.confirm_requests == row.confirm_requests)
        .values(
            confirm_requests=asked + 1,
            last_confirm_request_at=now,
            state=PENDING,
            address=address,
            base_url=base_url or row.base_url,
            unsubscribed_at=None,
        )
    ).rowcount
    if not won:
        return Subscribed("limited", row.id)
    _cancel(conn, row.id, CONFIRM_KIND)  # only the newest request's link goes out
    conn.execute(
        OUTBOX.insert().values(
            subscriber_id=row.id, update_id=None, kind=CONFIRM_KIND, status=PENDING, attempts=0,
            next_attempt_at=now, created_at=now,
        )
    )  # fmt: skip
    return Subscribed("queued", row.id)


def _cancel(conn: Connection, subscriber_id: int, kind: str | None = None) -> None:
    where = [OUTBOX.c.subscriber_id == subscriber_id, OUTBOX.c.status == PENDING]
    if kind is not None:
        where.append(OUTBOX.c.kind == kind)
    conn.execute(update(OUTBOX).where(*where).values(status=CANCELLED, last_error="no longer wanted"))


def _subscriber_of(conn: Connection, token: str | None):
    parsed = read_token(token)
    if parsed is None:
        return None, None
    row = conn.execute(select(SUBSCRIBERS).where(SUBSCRIBERS.c.id == parsed.subscriber_id)).first()
    return parsed, row


def confirm(conn: Connection, secret: bytes, token: str | None, *, now: datetime) -> str:
    """`confirmed`, `already` (confirmed before) or `invalid` (altered, expired, or for an address no
    longer waiting for it)."""
    parsed, row = _subscriber_of(conn, token)
    if row is None or not parsed.valid(secret, CONFIRM, row.address_key, now, CONFIRM_TTL):
        return "invalid"
    if row.state == CONFIRMED:
        return "already"
    if row.state != PENDING:
        return "invalid"
    conn.execute(
        update(SUBSCRIBERS)
        .where(SUBSCRIBERS.c.id == row.id, SUBSCRIBERS.c.state == PENDING)
        .values(state=CONFIRMED, confirmed_at=now)
    )
    _cancel(conn, row.id, CONFIRM_KIND)
    return "confirmed"


def check_unsubscribe(conn: Connection, secret: bytes, token: str | None, *, now: datetime):
    """The subscriber row an unsubscribe token names, or None when the token is not valid."""
    parsed, row = _subscriber_of(conn, token)
    if row is None or not parsed.valid(secret, UNSUBSCRIBE, row.address_key, now):
        return None
    return row


def unsubscribe(conn: Connection, secret: bytes, token: str | None, *, now: datetime) -> str:
    """`unsubscribed`, `already` or `invalid`; every message still waiting for the address is cancelled."""
    row = check_unsubscribe(conn, secret, token, now=now)
    if row is None:
        return "invalid"
    if row.state == UNSUBSCRIBED:
        return "already"
    conn.execute(update(SUBSCRIBERS).where(SUBSCRIBERS.c.id == row.id).values(state=UNSUBSCRIBED, unsubscribed_at=now))
    _cancel(conn, row.id)
    return "unsubscribed"


def fan_out(conn: Connection, now: datetime) -> int:
    """Queue each published update for each subscriber confirmed by then; the number of rows queued."""
    due = select(UPDATES.c.id).where(
        UPDATES.c.published.is_(True),
        (UPDATES.c.fanned_out.is_(False)) | (UPDATES.c.published_at >= now - RECHECK),
    )
    ids = [r for (r,) in conn.execute(due)]
    if not ids:
        return 0
    at = bindparam("now", now, type_=UTCDateTime())
    pairs = (
        select(
            SUBSCRIBERS.c.id,
            UPDATES.c.id,
            literal(UPDATE_KIND),
            literal(PENDING),
            literal(0),
            at,
            at,
        )
        .select_from(SUBSCRIBERS.join(UPDATES, SUBSCRIBERS.c.confirmed_at <= UPDATES.c.published_at))
        .where(SUBSCRIBERS.c.state == CONFIRMED, UPDATES.c.id.in_(ids))
    )
    columns = ["subscriber_id", "update_id", "kind", "status", "attempts", "next_attempt_at", "created_at"]
    stmt = (
        _insert(conn)(OUTBOX)
        .from_select(columns, pairs)
        .on_conflict_do_nothing(index_elements=["subscriber_id", "update_id"])
    )
    queued = conn.execute(stmt).rowcount
    conn.execute(update(UPDATES).where(UPDATES.c.id.in_(ids)).values(fanned_out=True))
    return max(queued, 0)


def forget(conn: Connection, now: datetime) -> None:
    """Addresses that never confirmed once their last link expired, addresses unsubscribed and settled
    messages past KEEP_MESSAGES."""
    asked = func.coalesce(SUBSCRIBERS.c.last_confirm_request_at, SUBSCRIBERS.c.created_at)
    conn.execute(delete(SUBSCRIBERS).where(SUBSCRIBERS.c.state == PENDING, asked < now - FORGET_UNCONFIRMED))
    conn.execute(
        delete(SUBSCRIBERS).where(
            SUBSCRIBERS.c.state == UNSUBSCRIBED, SUBSCRIBERS.c.unsubscribed_at < now - KEEP_MESSAGES
        )
    )
    conn.execute(delete(OUTBOX).where(OUTBOX.c.status != PENDING, OUTBOX.c.created_at < now - KEEP_MESSAGES))
