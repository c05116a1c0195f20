"""`slack`: a Block Kit message (DESIGN §18), by incoming webhook (`url`) or as a bot (`token` + `channel`).

    notifiers:
      - {name: oncall-slack, type: slack, url: "${SLACK_WEBHOOK_URL}", severities: [page]}
      - {name: ops-slack, type: slack, token: "${SLACK_BOT_TOKEN}", channel: "#llm-oncall"}

The blocks, from the one message model (monitor.alerts.message): a header (severity and title), the
summary, the facts as two-column fields (scope, vantage points, network or provider, baseline → now,
the alternative route …), the chart (an image block Slack fetches from its signed URL on `run
--listen`'s `public_url`), buttons to the dashboard view, the one-click silence and the runbook, and
a context line. Built with slack_sdk's Block Kit models, which check Slack's limits.

An incoming webhook's URL is its credential, so is a bot token: both are secrets, never in an error.
A webhook answers `ok` or an HTTP error (`invalid_payload`, `no_service`); chat.postMessage answers
200 with `{"ok": false, "error": …}`, its retryable errors (rate limits, Slack's own trouble) told
from the permanent ones (a bad token, a channel the bot is not in).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import field
from typing import Any, ClassVar

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    HeaderBlock,
    ImageBlock,
    MarkdownTextObject,
    SectionBlock,
)

from monitor.alerts.message import DASHBOARD, SILENCE, Link, Message, message_of
from monitor.alerts.notifiers.base import NO_CONTEXT, Context, DeliveryError, HttpNotifier, answered, url_secrets
from monitor.config.errors import problem
from monitor.config.fields import OptionalSecret, Url, alias, spec, text
from monitor.config.notifiers import NotifierConfig, SecretUrl, Timeout

API_URL = "https://slack.com/api"
HEADER_CHARS, TEXT_CHARS, FIELD_CHARS, BUTTON_CHARS = 150, 3000, 2000, 75
MAX_FIELDS = 10
# chat.postMessage errors worth another try later; any other `error` is a request that cannot work.
RETRYABLE_API_ERRORS = frozenset(
    {"ratelimited", "rate_limited", "service_unavailable", "fatal_error", "internal_error", "request_timeout"}
)
BUTTON_STYLES = {DASHBOARD: "primary", SILENCE: "danger"}


@spec(kw_only=True)
class SlackConfig(NotifierConfig):
    type: ClassVar[str] = "slack"
    url: SecretUrl | None = field(default=None, repr=False)  # an incoming webhook: its URL is its credential
    token: OptionalSecret = field(default=None, repr=False)  # a bot token (xoxb-…), with `channel`
    channel: text(200) | None = None  # where the bot posts: #name or a channel id
    api_url: Url = API_URL  # Slack's Web API (a test stands in for it)
    timeout_s: Timeout = alias("timeout", 10.0)

    def _finish(self, ctx: Any) -> list[dict]:
        if (self.url is None) == (self.token is None):
            return [problem((), "give url (an incoming webhook) or token and channel (a bot), one of them")]
        if self.token is not None and not self.channel:
            return [problem(("channel",), "required with token: the channel the bot posts to")]
        if self.url is not None and self.channel:
            return [problem(("channel",), "an incoming webhook posts to its own channel: leave channel out")]
        return []


def _mrkdwn(value: str) -> str:
    """Slack's three control characters, escaped: a model name never turns into a link or a mention."""
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _cut(value: str, limit: int) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _button(i: int, link: Link) -> ButtonElement:
    label = _cut(link.label, BUTTON_CHARS)
    return ButtonElement(text=label, url=link.url, action_id=f"firsttoken-{i}", style=BUTTON_STYLES.get(link.label))


def blocks_of(message: Message) -> list[Block]:
    fields = [MarkdownTextObject(text=_cut(f"*{f.label}*\n{_mrkdwn(f.value)}", FIELD_CHARS)) for f in message.facts]
    blocks: list[Block] = [
        HeaderBlock(text=_cut(message.title, HEADER_CHARS)),
        SectionBlock(text=MarkdownTextObject(text=_cut(_mrkdwn(message.summary) or " ", TEXT_CHARS))),
    ]
    for start in range(0, len(fields), MAX_FIELDS):
        blocks.append(SectionBlock(fields=fields[start : start + MAX_FIELDS]))
    if message.chart_url:
        blocks.append(ImageBlock(image_url=message.chart_url, alt_text=message.chart_alt, title="Last 6 hours"))
    if message.links:
        blocks.append(ActionsBlock(elements=[_button(i, link) for i, link in enumerate(message.links)]))
    blocks.append(ContextBlock(elements=[MarkdownTextObject(text=_mrkdwn(message.footer))]))
    for block in blocks:
        block.validate_json()  # Slack's limits, checked here rather than as a 400 later
    return blocks


def slack_payload(body: Mapping[str, Any]) -> dict[str, Any]:
    """What is posted: the fallback text (notifications, screen readers) and the blocks."""
    message = message_of(body)
    return {
        "text": _cut(f"{message.title}: {message.summary}", TEXT_CHARS),
        "blocks": [block.to_dict() for block in blocks_of(message)],
    }


class SlackNotifier(HttpNotifier):
    what = "slack"

    @staticmethod
    def own_secrets(config: SlackConfig) -> Iterable[str]:
        # A webhook URL's path is its token: every piece of it is kept out of errors, not just the whole.
        return (*(url_secrets(str(config.url)) if config.url else ()), *((str(config.token),) if config.token else ()))

    def send(self, body: Mapping[str, Any], *, event: str, delivery_id: str) -> str:
        payload = slack_payload(body)
        if self._config.url is not None:
            return answered(self._post_json(str(self._config.url), _json(payload)))
        payload.update(channel=self._config.channel, unfurl_links=False, unfurl_media=False)
        url = self._config.api_url.rstrip("/") + "/chat.postMessage"
        response = self._post_json(url, _json(payload), {"Authorization": f"Bearer {self._config.token}"})
        try:
            reply = response.json()
        except ValueError:
            reply = {}
        if not reply.get("ok"):
            error = str(reply.get("error") or "no answer")[:100]
            raise DeliveryError(f"slack chat.postMessage: {error}", retryable=error in RETRYABLE_API_ERRORS)
        return f"{answered(response)} ok, ts {reply.get('ts')}"


def _json(payload: Mapping[str, Any]) -> bytes:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def create(config: SlackConfig, secrets: Iterable[str] = (), context: Context = NO_CONTEXT) -> SlackNotifier:
    return SlackNotifier(config, secrets)
