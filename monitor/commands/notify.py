"""`firsttoken notify test [--notifier NAME]`: a sample alert through the configured notifiers (DESIGN §18).

    $ firsttoken notify test
    sample alert #0: ttft-regression on openai/gpt-4o-mini@us-east:short (chart and silence links signed)
    oncall-slack   slack    ok: HTTP 200
    oncall-teams   teams    ok: HTTP 202
    oncall-mail    email    FAILED: email: smtp smtp.example.com:587: unreachable: timed out after 10s

The sample is a real alert's body (monitor.alerts.sample): a TTFT regression on the config's first
target, seen from two vantage points, with its dashboard link, runbook, alternative route, chart and
one-click silence link, sent straight to each notifier (not through the outbox: the answer is
printed as it comes). Its chart is drawn from the target's samples in the database when there are
some, else from synthetic ones; its links are signed like a real alert's when `public_url` is set,
and answered by `firsttoken run --listen` as alert 0. Exit 0 when every notifier took it, 1 when any
failed, 2 for a notifier name the config does not have.
"""

from __future__ import annotations

import argparse
import logging
import sys
import uuid
from datetime import UTC, datetime

from monitor.errors import UsageError

log = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="notify_command", metavar="{test}")
    test = sub.add_parser("test", help="send a sample alert through one or every configured notifier")
    test.add_argument("--notifier", metavar="NAME", help="only this notifier (default: every one)")
    test.add_argument("--config", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    test.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "notify_command", None) != "test":
        raise UsageError("firsttoken notify: expected test")
    from monitor.config import DEFER, ConfigError, load_config

    config = load_config(args.config, secrets=DEFER)  # providers' keys: a test sends no probe
    chosen = _chosen(config, getattr(args, "notifier", None))
    if missing := unset_credentials(config, chosen):
        raise ConfigError(missing, args.config)
    engine = _database(args)
    try:
        return _send_all(config, chosen, engine)
    finally:
        if engine is not None:
            engine.dispose()


def unset_credentials(config, chosen: list) -> list[str]:
    """The unset `${VAR}`s of the notifiers about to send (and of `smtp:`, which email sends through),
    one line each: least privilege, as for probe (a provider's key is not needed to test a notifier)."""
    indexes = {i for i, n in enumerate(config.notifiers) if n in chosen}
    email = any(n.type == "email" for n in chosen)
    needed = (*(f"notifiers[{i}]" for i in sorted(indexes)), *(("smtp",) if email else ()))
    return [
        f"{path}: environment variable {name} is not set (notify test sends it)"
        for path, names in config.unset_secrets.items()
        if any(path == p or path.startswith((f"{p}.", f"{p}[")) for p in needed)
        for name in names
    ]


def _chosen(config, name: str | None) -> list:
    names = [n.name for n in config.notifiers]
    if not names:
        raise UsageError("firsttoken notify test: the config has no notifiers: section to test")
    if name is None:
        return list(config.notifiers)
    if name not in names:
        from monitor.config.errors import did_you_mean

        hint = did_you_mean(name, names)
        raise UsageError(f"firsttoken notify test: no notifier {name!r}{hint}; the config has {', '.join(names)}")
    return [n for n in config.notifiers if n.name == name]


def _database(args: argparse.Namespace):
    """The config's database when it is reachable and migrated; None otherwise (said, not fatal: the
    sample goes out with a synthetic chart)."""
    from monitor.commands.db import SchemaNotReady, open_migrated

    try:
        return open_migrated(args, read_only=False)
    except SchemaNotReady as exc:
        print(f"note: {exc}: the chart is drawn from synthetic samples", file=sys.stderr)
    except Exception as exc:
        print(f"note: database unavailable ({type(exc).__name__}): the chart is synthetic", file=sys.stderr)
    return None


def _links(engine, config):
    from monitor.alerts.signing import SECRET_ENV, AlertLinks, alert_links, link_secret

    if not config.public_url:
        print(
            "note: public_url is not set: Slack and Teams get no chart and nobody a silence link "
            "(email still has its chart inline)",
            file=sys.stderr,
        )
        return None
    if engine is not None:
        return alert_links(engine, config)
    try:
        return AlertLinks(str(config.public_url), link_secret(None))  # the environment's, or none
    except Exception:
        print(f"note: no database and no {SECRET_ENV}: the links cannot be signed", file=sys.stderr)
        return None


def _alternative(engine, record, now: datetime):
    if engine is None:
        return None
    from monitor.alerts.alternatives import alternatives
    from monitor.alerts.records import Change

    return alternatives(engine, [Change(record, ("firing",))], now).get(record.scope.key)


def _send_all(config, chosen: list, engine) -> int:
    from monitor.alerts.charts import AlertCharts
    from monitor.alerts.message import scope_text
    from monitor.alerts.notifiers import Context, DeliveryError, build_notifier
    from monitor.alerts.sample import SAMPLE_ALERT_ID, sample_body, sample_record
    from monitor.redact import redact

    now = datetime.now(UTC)
    links = _links(engine, config)
    alternative = _alternative(engine, sample_record(config, now), now)
    body = sample_body(config, now, links=links, alternative=alternative)
    signed = "chart and silence links signed" if links is not None else "no chart or silence link"
    print(f"sample alert #{SAMPLE_ALERT_ID}: {body['rule']} on {scope_text(body)} ({signed})")
    context = Context(smtp=config.smtp, chart=AlertCharts(engine, lambda: config).png_or_none)
    secrets = tuple(config.secrets)
    width = max(len(n.name) for n in chosen)
    failed = 0
    for entry in chosen:
        try:
            notifier = build_notifier(entry, secrets, context)
            try:
                answer = notifier.send(body, event="firing", delivery_id=f"test-{uuid.uuid4().hex[:12]}")
            finally:
                notifier.close()
            outcome = f"ok: {answer or 'sent'}"
        except DeliveryError as exc:
            outcome, failed = f"FAILED: {redact(str(exc), secrets)}", failed + 1
        except Exception as exc:  # a notifier's bug: one line, like the outbox records it
            outcome, failed = f"FAILED: {type(exc).__name__}: {redact(str(exc), secrets)}", failed + 1
        print(f"{entry.name:<{width}}  {entry.type:<12} {' '.join(outcome.split())}")
    return 1 if failed else 0
