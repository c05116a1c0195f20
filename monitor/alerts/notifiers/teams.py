"""`teams`: an Adaptive Card 1.5 (DESIGN §18) to a Microsoft Teams Workflows webhook.

    notifiers:
      - {name: oncall-teams, type: teams, url: "${TEAMS_WORKFLOW_URL}"}

Teams' Workflows ("Post to a channel when a webhook request is received") takes a message with the
card as its one attachment: `{"type": "message", "attachments": [{"contentType":
"application/vnd.microsoft.card.adaptive", "content": <card>}]}`, and answers 202. The card, from the
one message model (monitor.alerts.message): a banner in the alert's colour (attention for a page,
warning for a ticket, good once resolved) with the title, the summary, the facts as a FactSet, the
chart (an Image Teams fetches from its signed URL), a context line, and Action.OpenUrl buttons to the
dashboard view, the one-click silence and the runbook. The Workflows URL carries its signature
(`sig=`): it is a secret, never in an error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import field
from typing import Any, ClassVar

from monitor.alerts.message import Message, message_of
from monitor.alerts.notifiers.base import NO_CONTEXT, Context, HttpNotifier, answered, url_secrets
from monitor.config.fields import alias, spec
from monitor.config.notifiers import NotifierConfig, SecretUrl, Timeout

CARD_CONTENT_TYPE = "application/vnd.microsoft.card.adaptive"
CARD_SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
CARD_VERSION = "1.5"
STYLES = {"page": "attention", "ticket": "warning"}  # a Container's style: the alert's colour in Teams' theme


@spec(kw_only=True)
class TeamsConfig(NotifierConfig):
    type: ClassVar[str] = "teams"
    url: SecretUrl = field(repr=False)  # the Workflows webhook: its `sig=` is its credential
    timeout_s: Timeout = alias("timeout", 10.0)


def card_of(message: Message) -> dict[str, Any]:
    style = "good" if message.resolved else STYLES.get(message.severity, "emphasis")
    body: list[dict[str, Any]] = [
        {
            "type": "Container",
            "style": style,
            "bleed": True,
            "items": [{"type": "TextBlock", "text": message.title, "weight": "Bolder", "size": "Medium", "wrap": True}],
        },
        {"type": "TextBlock", "text": message.summary, "wrap": True},
        {"type": "FactSet", "facts": [{"title": f.label, "value": f.value} for f in message.facts]},
    ]
    if message.chart_url:
        body.append({"type": "Image", "url": message.chart_url, "altText": message.chart_alt, "size": "Stretch"})
    body.append({"type": "TextBlock", "text": message.footer, "isSubtle": True, "size": "Small", "wrap": True})
    card: dict[str, Any] = {
        "type": "AdaptiveCard",
        "$schema": CARD_SCHEMA,
        "version": CARD_VERSION,
        "msteams": {"width": "Full"},
        "body": body,
    }
    if message.links:
        card["actions"] = [{"type": "Action.OpenUrl", "title": link.label, "url": link.url} for link in message.links]
    return card


def teams_payload(body: Mapping[str, Any]) -> dict[str, Any]:
    """The card wrapped as Workflows expects: a message whose one attachment is the card."""
    card = card_of(message_of(body))
    return {"type": "message", "attachments": [{"contentType": CARD_CONTENT_TYPE, "contentUrl": None, "content": card}]}


class TeamsNotifier(HttpNotifier):
    what = "teams"

    @staticmethod
    def own_secrets(config: TeamsConfig) -> Iterable[str]:
        return url_secrets(str(config.url))  # the URL and its pieces: `sig=` alone is the credential

    def send(self, body: Mapping[str, Any], *, event: str, delivery_id: str) -> str:
        raw = json.dumps(teams_payload(body), separators=(",", ":"), ensure_ascii=False).encode()
        return answered(self._post_json(str(self._config.url), raw))


def create(config: TeamsConfig, secrets: Iterable[str] = (), context: Context = NO_CONTEXT) -> TeamsNotifier:
    return TeamsNotifier(config, secrets)
