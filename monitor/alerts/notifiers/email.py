"""`email`: an HTML and plain-text mail (DESIGN §18) through the config's `smtp:` (monitor.mail).

    notifiers:
      - {name: oncall-mail, type: email, to: [oncall@example.com]}    # needs the smtp: section

The mail is the one message model (monitor.alerts.message) in monitor/alerts/templates/alert.*.j2:
the title in the alert's colour, the summary, the facts, the chart inline (a `related` image part
with Content-ID `chart`, drawn from the database when the mail is sent: the notifier's context
has the drawing, monitor.alerts.charts), and the links to the dashboard view, the one-click silence
and the runbook. Its Message-ID comes from the delivery id, so a retry after a crash is the same
mail to a receiver that deduplicates; every mail of one alert names the same thread (References).

The mailer's errors name the server and never its password (monitor.mail.send); 5xx refusals are
permanent, everything else is retried by the outbox.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator

from monitor.alerts.message import message_of
from monitor.alerts.notifiers.base import NO_CONTEXT, Context, DeliveryError
from monitor.config.errors import fail
from monitor.config.fields import NonEmpty, spec, text, unique
from monitor.config.notifiers import NotifierConfig
from monitor.mail import InlineImage, Mailer, MailError, Templates, compose
from monitor.redact import redact

CHART_CID = "chart"
SITE_TITLE = "firsttoken"


def _address(value: str) -> str:
    local, at, domain = value.partition("@")
    if not at or not local or "." not in domain or any(c.isspace() for c in value) or "," in value:
        fail("not an email address (like oncall@example.com), got {got}")
    return value


Address = Annotated[text(320), AfterValidator(_address)]


@spec(kw_only=True)
class EmailConfig(NotifierConfig):
    type: ClassVar[str] = "email"
    needs: ClassVar[tuple[str, ...]] = ("smtp",)
    to: Annotated[tuple[Address, ...], NonEmpty, AfterValidator(unique)]


_templates: Templates | None = None


def templates() -> Templates:
    global _templates
    if _templates is None:
        _templates = Templates("monitor.alerts")
    return _templates


def alert_mail(body: Mapping[str, Any], *, sender: str, to: Iterable[str], chart: bytes | None, delivery_id: str):
    """The EmailMessage of one notification (pure but for the date header)."""
    message = message_of(body)
    domain = sender.rpartition("@")[2] or "firsttoken"
    context = {
        "message": message,
        "has_chart": chart is not None,
        "chart_cid": CHART_CID,
        "site_title": SITE_TITLE,
        "footer_links": [],
    }
    images = [InlineImage(CHART_CID, chart, filename="chart.png")] if chart is not None else []
    return compose(
        templates(),
        "alert",
        context,
        sender=sender,
        to=list(to),
        subject=message.title,
        images=images,
        headers={"References": f"<firsttoken.alert.{body.get('alert_id')}@{domain}>"},
        message_id=f"<firsttoken.{delivery_id}.{body.get('alert_id')}@{domain}>",
    )


class EmailNotifier:
    def __init__(self, config: EmailConfig, secrets: Iterable[str] = (), context: Context = NO_CONTEXT) -> None:
        self.name = config.name
        self._config = config
        self._smtp = context.smtp
        self._chart = context.chart
        self._secrets = tuple(secrets)
        self._mailer = Mailer(context.smtp, self._secrets) if context.smtp is not None else None

    def send(self, body: Mapping[str, Any], *, event: str, delivery_id: str) -> str:
        if self._mailer is None:
            raise DeliveryError("email: the config has no smtp: section", retryable=False)
        mail = alert_mail(
            body, sender=self._smtp.sender, to=self._config.to, chart=self._chart(body), delivery_id=delivery_id
        )
        try:
            self._mailer.send(mail)
        except MailError as exc:
            raise DeliveryError(f"email: {redact(str(exc), self._secrets)}", retryable=exc.retryable) from None
        return f"accepted by smtp {self._mailer.where}"

    def close(self) -> None:
        if self._mailer is not None:
            self._mailer.close()


def create(config: EmailConfig, secrets: Iterable[str] = (), context: Context = NO_CONTEXT) -> EmailNotifier:
    return EmailNotifier(config, secrets, context)
