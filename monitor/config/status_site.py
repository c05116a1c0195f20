"""`status_site:`, `smtp:` and `maintenance:` (DESIGN §16): what the public status site shows, how mail
leaves, and when planned work mutes pages.

    status_site: {title: Acme's LLM providers, url: https://status.example.com, components: ["openai/*"],
                  publish: auto, history_days: 90}
    smtp: {host: smtp.example.com, port: 587, starttls: true, username: status,
           password: "${SMTP_PASSWORD}", from: status@example.com}
    maintenance:
      - {name: openai-sunday, match: {provider: openai}, rrule: "FREQ=WEEKLY;BYDAY=SU;BYHOUR=2;BYMINUTE=0",
         duration: 1h, timezone: Europe/Berlin, note: OpenAI's weekly maintenance}
"""

from __future__ import annotations

from dataclasses import field
from datetime import datetime
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from monitor.config.errors import problem
from monitor.config.fields import (
    LoadContext,
    Name,
    OptionalSecret,
    Text,
    Texts,
    Timestamp,
    Url,
    alias,
    number,
    seconds,
    spec,
    text,
)
from monitor.config.selectors import SCOPE_LABELS, Scope, scope_matches

DAY_S = 86400.0


@spec
class StatusSite:
    title: text(200) = "LLM provider status"
    url: Url | None = None  # the public base URL: links in feeds and mails
    components: Texts = ("*",)  # target-id globs shown, grouped provider -> model
    publish: Literal["auto", "manual"] = "auto"  # manual: drafted incidents wait for `incident publish`
    history_days: number(1, 400, integer=True) = 90


@spec
class Smtp:
    host: Text
    port: number(1, 65535, integer=True) = 587
    starttls: bool | None = None  # upgrade a plain connection (port 587); unset: yes unless tls
    tls: bool = False  # TLS from the first byte (port 465); not with starttls
    username: Text | None = None
    password: OptionalSecret = field(default=None, repr=False)
    sender: Text = alias("from")  # the From: address
    timeout_s: seconds(300.0, min_s=0.1) = alias("timeout", 10.0)

    @property
    def use_starttls(self) -> bool:
        return (not self.tls) if self.starttls is None else self.starttls

    def _finish(self, ctx: LoadContext | None) -> list[dict]:
        if self.tls and self.starttls:
            return [problem(("starttls",), "give tls (port 465) or starttls (port 587), not both")]
        if self.password is not None and self.username is None:
            return [problem(("username",), "a password needs a username")]
        return []


@spec
class MaintenanceWindow:
    """Planned work: pages on its scope are muted (recorded as `muted: maintenance`), probes go on and
    are marked, SLO budgets and SLA minutes leave it out. A one-off window (`start`, `end`) or a
    recurring one (`rrule` and `duration`, in `timezone`)."""

    name: Name
    match: Scope = field(hash=False)
    rrule: text(500) | None = None  # RFC 5545 RRULE, e.g. FREQ=WEEKLY;BYDAY=SU;BYHOUR=2;BYMINUTE=0
    duration_s: seconds(7 * DAY_S, min_s=59.0) | None = alias("duration", None)
    timezone: text(64) = "UTC"
    start: Timestamp | None = None
    end: Timestamp | None = None
    note: text(1000) = ""

    def matches(self, provider: str | None, model=None, region=None, prompt=None) -> bool:
        return scope_matches(self.match, provider=provider, model=model, region=region, prompt=prompt)

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    def _finish(self, ctx: LoadContext | None) -> list[dict]:
        errors = []
        if not self.match:
            errors.append(problem(("match",), f"must name at least one of {', '.join(SCOPE_LABELS)}"))
        try:
            ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            errors.append(
                problem(("timezone",), f"unknown time zone {self.timezone!r} (an IANA name like Europe/Berlin)")
            )
        one_off, recurring = self.start is not None or self.end is not None, self.rrule is not None
        if one_off == recurring:
            errors.append(problem((), "give start and end (one window) or rrule and duration (recurring)"))
        elif one_off:
            if self.start is None or self.end is None:
                errors.append(
                    problem(("end" if self.end is None else "start",), "a one-off window needs start and end")
                )
            elif self.end <= self.start:
                errors.append(problem(("end",), "must be after start"))
        else:
            if self.duration_s is None:
                errors.append(problem(("duration",), "a recurring window needs a duration (e.g. 1h)"))
            errors += _rrule_problems(self.rrule or "")
        return errors


def _rrule_problems(rule: str) -> list[dict]:
    from dateutil.rrule import rrulestr

    try:
        rrulestr(rule.removeprefix("RRULE:"), dtstart=datetime(2026, 1, 1))
    except (ValueError, TypeError) as exc:
        return [problem(("rrule",), f"not an RRULE: {exc}")]
    return []


__all__ = ["MaintenanceWindow", "Smtp", "StatusSite"]
