"""`firsttoken report weekly [--week 2026-W48] [--report NAME] [--format html|pdf] [-o FILE] [--send]`:
the weekly report (DESIGN §17), written out and/or mailed now.

`--report NAME` takes a `reports:` entry's providers, time zone and recipients (default: every
provider, the week in UTC; with `--send` and one entry only, that entry). The week defaults to the
last whole one in that time zone. `--send` mails it through `smtp:` at once, whatever the schedule
did: the leader's scheduled sends are recorded on their own (`report_runs`, monitor.reports.runs).
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from email.utils import make_msgid
from zoneinfo import ZoneInfo

from monitor.errors import UsageError

PROG = "firsttoken report weekly"


def _entry(config, args: argparse.Namespace):
    name = getattr(args, "entry", None)
    names = ", ".join(r.name for r in config.reports) or "none"
    if name is not None:
        found = next((r for r in config.reports if r.name == name), None)
        if found is None:
            raise UsageError(f"{PROG}: no reports: entry named {name!r} in {args.config} (reports: {names})")
        return found
    if args.send:
        if len(config.reports) == 1:
            return config.reports[0]
        raise UsageError(
            f"{PROG}: --send mails a reports: entry's recipients: name one with --report (reports: {names})"
        )
    return None


def run(args: argparse.Namespace) -> int:
    from monitor.config import load_config
    from monitor.reports.schedule import last_whole_week, parse_week

    if args.format == "pdf" and not args.output:
        raise UsageError(f"{PROG}: a PDF needs -o FILE")
    config = load_config(args.config)
    entry = _entry(config, args)
    zone = entry.zone if entry is not None else ZoneInfo("UTC")
    try:
        week = parse_week(args.week, zone) if args.week else last_whole_week(datetime.now(UTC), zone)
    except ValueError as exc:
        raise UsageError(f"{PROG}: --week: {exc}") from None
    if args.send and config.smtp is None:
        raise UsageError(f"{PROG}: --send needs smtp: in {args.config}")
    report = _build(config, args, entry, week)
    if report is None:
        return 1
    if args.output or not args.send:
        _write(report, args)
    if args.send:
        return _send(config, entry, report)
    return 0


def _build(config, args, entry, week):
    from monitor.commands.db import SchemaNotReady, migrated_engine
    from monitor.reports.weekly import build_weekly_report
    from monitor.reports.weekly.report import title_for

    try:
        with migrated_engine(args, read_only=True) as engine:
            return build_weekly_report(
                engine,
                config.targets,
                week,
                providers=entry.providers if entry is not None else (),
                slos=config.slos,
                maintenance=config.maintenance,
                title=title_for(config),
            )
    except SchemaNotReady as exc:
        print(f"firsttoken: {exc}", file=sys.stderr)
        return None


def _write(report, args) -> None:
    from monitor.reports.weekly import render_html, render_pdf

    if args.format == "pdf":
        data = render_pdf(report)
        with open(args.output, "wb") as out:
            out.write(data)
        print(f"wrote {args.output} ({len(data):,} bytes, {report.week.label})", file=sys.stderr)
        return
    html = render_html(report)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(html)
        print(f"wrote {args.output} ({report.week.label})", file=sys.stderr)
    else:
        sys.stdout.write(html)


def _send(config, entry, report) -> int:
    from monitor.mail import MailError, send_mail
    from monitor.reports.weekly import mail_message

    sender = str(config.smtp.sender)
    message = mail_message(
        report,
        sender=sender,
        to=entry.to,
        message_id=make_msgid(f"report-{entry.name}-{report.week.label}", domain=sender.rpartition("@")[2] or None),
        attach_pdf=entry.attach_pdf,
    )
    try:
        send_mail(config.smtp, message, tuple(config.secrets))
    except MailError as exc:
        print(f"firsttoken: {exc}", file=sys.stderr)
        return 1
    print(
        f"sent the weekly report {report.week.label} ({entry.name}) to {len(entry.to)} recipient(s) via {config.smtp.host}:{config.smtp.port}"
    )
    return 0
