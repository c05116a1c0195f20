"""The period an SLA report covers: a calendar month, or [from, to), in UTC (DESIGN §17)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

from monitor.reports.sla.report import Period

_MONTH = re.compile(r"^(\d{4})-(\d{2})$")


def month(text: str) -> Period:
    """`2026-11` -> [2026-11-01, 2026-12-01) UTC; ValueError naming what is wrong."""
    found = _MONTH.match(text.strip())
    if not found or not 1 <= int(found.group(2)) <= 12:
        raise ValueError(f"--month: expected YYYY-MM, got {text!r}")
    year, mon = int(found.group(1)), int(found.group(2))
    start = datetime(year, mon, 1, tzinfo=UTC)
    end = datetime(year + mon // 12, mon % 12 + 1, 1, tzinfo=UTC)
    return Period(start, end, f"{year:04d}-{mon:02d}")


def between(start_text: str, end_text: str) -> Period:
    """`--from 2026-11-01 --to 2026-11-15`: dates (midnight UTC) or ISO times; `to` is exclusive."""
    start, end = _moment(start_text, "--from"), _moment(end_text, "--to")
    if end <= start:
        raise ValueError(f"--to ({end_text}) must be after --from ({start_text})")
    start = start.replace(second=0, microsecond=0)  # whole minutes: the contract's measure
    end = end.replace(second=0, microsecond=0)
    return Period(start, end, f"{_label(start)} to {_label(end)}")


def _moment(text: str, flag: str) -> datetime:
    value = text.strip()
    try:
        if len(value) == 10:
            day = date.fromisoformat(value)
            return datetime(day.year, day.month, day.day, tzinfo=UTC)
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{flag}: expected a date (2026-11-01) or an ISO time, got {text!r}") from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)


def _label(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d") if moment.hour == moment.minute == 0 else moment.strftime("%Y-%m-%d %H:%M")
