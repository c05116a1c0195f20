"""`reports:` (DESIGN §17): reports mailed on a schedule by the leader (through `smtp:`).

    reports:
      - {name: weekly, to: [pm@example.com], every: "MON 09:00", timezone: Europe/Berlin,
         providers: [openai, bedrock]}

`every` is a weekday and a wall-clock time in `timezone`; the report sent then covers the ISO week
(Monday to Monday, in that time zone) that ended last.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator

from monitor.config.errors import fail, problem
from monitor.config.fields import LoadContext, Name, NonEmpty, Text, Texts, spec, text

WEEKDAYS = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")
_EVERY = re.compile(r"^\s*([A-Za-z]{3})\s+([01]?\d|2[0-3]):([0-5]\d)\s*$")
_ADDRESS = re.compile(r"^[^@\s<>]+@[^@\s<>]+\.[^@\s<>]+$")


def parse_every(value: str) -> tuple[int, int, int]:
    """`MON 09:00` -> (weekday 0..6 with Monday 0, hour, minute); ValueError when it is not that."""
    found = _EVERY.match(value)
    if not found or found.group(1).upper() not in WEEKDAYS:
        raise ValueError(f"expected a weekday and a time like 'MON 09:00', got {value!r}")
    return WEEKDAYS.index(found.group(1).upper()), int(found.group(2)), int(found.group(3))


def _every(value: str) -> str:
    try:
        parse_every(value)
    except ValueError as exc:
        fail(str(exc))
    return value.strip().upper()


def _addresses(values: tuple[str, ...]) -> tuple[str, ...]:
    for value in values:
        if not _ADDRESS.match(value):
            fail(f"not a mail address: {value!r}")
    return values


@spec
class ReportEntry:
    name: Name
    to: Annotated[Texts, NonEmpty, AfterValidator(_addresses)]
    every: Annotated[Text, AfterValidator(_every)] = "MON 09:00"
    timezone: text(64) = "UTC"
    providers: Texts = ()  # unset: every provider
    kind: Literal["weekly"] = "weekly"
    attach_pdf: bool = False  # the PDF of the same report attached to the mail

    @property
    def schedule(self) -> tuple[int, int, int]:
        return parse_every(self.every)

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    def _finish(self, ctx: LoadContext | None) -> list[dict]:
        try:
            ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            return [problem(("timezone",), f"unknown time zone {self.timezone!r} (an IANA name like Europe/Berlin)")]
        return []


def report_problems(reports: tuple[ReportEntry | None, ...], providers: Any, smtp: Any) -> list[dict]:
    """References across sections: providers that exist, a unique name, and `smtp:` to send with."""
    errors, seen = [], set()
    for n, report in enumerate(reports):
        if report is None:
            continue
        for k, name in enumerate(report.providers):
            if name not in providers:
                errors.append(problem(("reports", n, "providers", k), f"no provider named {name!r}"))
        if report.name in seen:
            errors.append(problem(("reports", n, "name"), f"two reports are named {report.name!r}"))
        seen.add(report.name)
        if smtp is None:
            errors.append(problem(("reports", n), "reports are sent by mail: configure smtp:"))
    return errors


__all__ = ["WEEKDAYS", "ReportEntry", "parse_every", "report_problems"]
