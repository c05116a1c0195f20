"""The slack, teams and email notifiers (DESIGN §18) against a real HTTP receiver and a real SMTP server.

What each receives: Block Kit with the chart's signed URL and the three links (dashboard, silence,
runbook); an Adaptive Card 1.5 wrapped as Teams Workflows expects; a multipart mail, HTML and text,
with the chart PNG inline. And what never leaves: webhook URLs, tokens and the SMTP password are in
no error.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime

import pytest
from PIL import Image

from monitor.alerts.charts import AlertCharts
from monitor.alerts.notifiers import Context, DeliveryError, build_notifier
from monitor.alerts.notifiers.teams import CARD_CONTENT_TYPE
from monitor.alerts.sample import sample_body
from monitor.alerts.signing import AlertLinks
from monitor.config import EmailConfig, SlackConfig, TeamsConfig
from monitor.config.errors import ConfigError
from tests.mailserver import MailServer

from .conftest import make_config
from .helpers import config_spec
from .receiver import Receiver

NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
HOOK_TOKEN = "XOXWEBHOOKsecret93kd71"
BOT_TOKEN = "xoxb-BOTTOKEN-5521-a8c1"
TEAMS_SIG = "TEAMSsig-77aa19bb02"
SMTP_PASSWORD = "SMTPpass-4471-zz"
RUNBOOK = "https://runbooks.example/ttft"


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    spec = config_spec(models=("gpt-4o",), providers=("openai",), regions=("us-east",))
    spec["alerts"] = [{"name": "ttft-regression", "metric": "ttft_ms", "kind": "regression", "runbook": RUNBOOK}]
    spec["dashboard_url"] = "https://dash.example"
    spec["public_url"] = "https://ft.example:9464"
    return make_config(spec, tmp_path_factory.mktemp("cfg"))


@pytest.fixture(scope="module")
def body(config):
    return sample_body(config, NOW, links=AlertLinks(config.public_url, b"k" * 32))


def links_of(body) -> list[str]:
    return [body["dashboard_url"], body["silence_url"], body["runbook"]]


def test_slack_webhook_gets_block_kit_with_the_signed_chart_and_three_links(body):
    with Receiver() as rx:
        notifier = build_notifier(SlackConfig(name="s", url=f"{rx.url}/services/T0/B0/{HOOK_TOKEN}"))
        answer = notifier.send(body, event="firing", delivery_id="1")
    assert answer == "HTTP 200"
    (req,) = rx.requests
    assert req.path == f"/services/T0/B0/{HOOK_TOKEN}" and req.headers["content-type"] == "application/json"
    sent = req.json()
    assert sent["text"].startswith("PAGE · ttft-regression firing on openai/gpt-4o@us-east:short: ")
    kinds = [b["type"] for b in sent["blocks"]]
    assert kinds == ["header", "section", "section", "image", "actions", "context"]
    header, summary, facts, image, actions, context = sent["blocks"]
    assert header["text"]["text"] == "PAGE · ttft-regression firing on openai/gpt-4o@us-east:short"
    assert summary["text"]["text"] == body["summary"]
    fields = [f["text"] for f in facts["fields"]]
    assert "*Seen from*\nus-east and eu-west" in fields and "*Normal from*\nap-south" in fields
    assert "*Baseline → now*\nttft_ms: 412 ms → 968 ms (+135%)" in fields
    assert any(f.startswith("*Network or provider*\nMostly the provider") for f in fields)
    assert image["image_url"] == body["chart_url"] and "/alerts/0/chart.png?exp=" in image["image_url"]
    assert [b["url"] for b in actions["elements"]] == links_of(body)
    assert [b["text"]["text"] for b in actions["elements"]] == ["Open in dashboard", "Silence 1 h", "Runbook"]
    assert [b.get("style") for b in actions["elements"]] == ["primary", "danger", None]
    assert context["elements"][0]["text"].startswith("firsttoken sample alert · rule ttft-regression")


def test_slack_escapes_its_control_characters(body):
    from monitor.alerts.notifiers.slack import slack_payload

    sent = slack_payload(body | {"summary": "p50 <b> & <@U123> went up"})
    assert sent["blocks"][1]["text"]["text"] == "p50 &lt;b&gt; &amp; &lt;@U123&gt; went up"


def test_slack_bot_posts_with_chat_post_message(body):
    with Receiver(reply=b'{"ok":true,"channel":"C1","ts":"1712.0042"}') as rx:
        config = SlackConfig(name="bot", token=BOT_TOKEN, channel="#llm-oncall", api_url=rx.url + "/api")
        answer = build_notifier(config).send(body, event="firing", delivery_id="1")
    assert answer == "HTTP 200 ok, ts 1712.0042"
    (req,) = rx.requests
    assert req.path == "/api/chat.postMessage" and req.headers["authorization"] == f"Bearer {BOT_TOKEN}"
    sent = req.json()
    assert sent["channel"] == "#llm-oncall" and sent["unfurl_links"] is False
    assert next(b["type"] for b in sent["blocks"]) == "header" and BOT_TOKEN not in req.raw.decode()


@pytest.mark.parametrize(("error", "retryable"), [("channel_not_found", False), ("ratelimited", True)])
def test_slack_api_errors_are_classified_and_never_show_the_token(body, error, retryable):
    reply = f'{{"ok":false,"error":"{error}","token":"{BOT_TOKEN}"}}'.encode()
    with Receiver(reply=reply) as rx:
        config = SlackConfig(name="bot", token=BOT_TOKEN, channel="#x", api_url=rx.url)
        with pytest.raises(DeliveryError) as err:
            build_notifier(config).send(body, event="firing", delivery_id="1")
    assert err.value.retryable is retryable and error in str(err.value) and BOT_TOKEN not in str(err.value)


def test_a_refused_webhook_names_neither_its_url_nor_its_token(body):
    with Receiver(fail_first=1, fail_status=404, echo=True) as rx:  # the answer quotes the request
        url = f"{rx.url}/services/T0/B0/{HOOK_TOKEN}"
        with pytest.raises(DeliveryError) as err:
            build_notifier(SlackConfig(name="s", url=url), secrets=()).send(body, event="firing", delivery_id="1")
    assert not err.value.retryable and "HTTP 404" in str(err.value) and HOOK_TOKEN not in str(err.value)
    assert "127.0.0.1" in str(err.value)  # the host only


def test_teams_gets_an_adaptive_card_1_5_wrapped_for_workflows(body):
    with Receiver(ok_status=202) as rx:
        url = f"{rx.url}/workflows/abc/triggers/manual/paths/invoke?api-version=1&sig={TEAMS_SIG}"
        answer = build_notifier(TeamsConfig(name="t", url=url)).send(body, event="firing", delivery_id="1")
    assert answer == "HTTP 202"
    sent = rx.requests[0].json()
    assert sent["type"] == "message" and len(sent["attachments"]) == 1
    (attachment,) = sent["attachments"]
    assert attachment["contentType"] == CARD_CONTENT_TYPE == "application/vnd.microsoft.card.adaptive"
    card = attachment["content"]
    assert card["type"] == "AdaptiveCard" and card["version"] == "1.5"
    assert card["$schema"] == "http://adaptivecards.io/schemas/adaptive-card.json"
    banner, summary, facts, image, footer = card["body"]
    assert banner["style"] == "attention" and banner["items"][0]["text"].startswith("PAGE · ttft-regression")
    assert summary["text"] == body["summary"]
    assert {"title": "Normal from", "value": "ap-south"} in facts["facts"]
    assert image == {"type": "Image", "url": body["chart_url"], "altText": image["altText"], "size": "Stretch"}
    assert [a["type"] for a in card["actions"]] == ["Action.OpenUrl"] * 3
    assert [a["url"] for a in card["actions"]] == links_of(body)
    assert footer["isSubtle"] is True


def test_teams_errors_never_show_the_workflow_signature(body):
    with Receiver(fail_first=1, fail_status=400, echo=True) as rx:
        url = f"{rx.url}/workflows/abc/invoke?sig={TEAMS_SIG}"
        with pytest.raises(DeliveryError) as err:
            build_notifier(TeamsConfig(name="t", url=url)).send(body, event="firing", delivery_id="1")
    assert "HTTP 400" in str(err.value) and TEAMS_SIG not in str(err.value)


def smtp_config(config, port: int, **kw):
    spec = {"host": "127.0.0.1", "port": port, "starttls": False, "from": "firsttoken@example.com", **kw}
    return make_config({**config_spec(), "smtp": spec}, "/tmp").smtp


def test_email_is_html_and_text_with_the_chart_inline(config, body):
    charts = AlertCharts(None, lambda: config, clock=lambda: NOW)
    with MailServer() as server:
        context = Context(smtp=smtp_config(config, server.port), chart=charts.png_or_none)
        notifier = build_notifier(EmailConfig(name="m", to=("oncall@example.com", "sre@example.com")), (), context)
        answer = notifier.send(body, event="firing", delivery_id="17")
        notifier.close()
        (got,) = server.wait_for(1)
    assert answer == f"accepted by smtp 127.0.0.1:{server.port}"
    assert got.recipients == ("oncall@example.com", "sre@example.com")
    mail = got.message
    assert mail["Subject"] == "PAGE · ttft-regression firing on openai/gpt-4o@us-east:short"
    assert (
        mail["Message-ID"] == "<firsttoken.17.0@example.com>"
        and mail["References"] == "<firsttoken.alert.0@example.com>"
    )
    assert mail.get_content_type() == "multipart/alternative"
    plain, related = mail.get_payload()
    assert plain.get_content_type() == "text/plain" and related.get_content_type() == "multipart/related"
    html, image = related.get_payload()
    assert html.get_content_type() == "text/html" and image.get_content_type() == "image/png"
    assert image["Content-ID"] == "<chart>" and 'src="cid:chart"' in html.get_content()
    width, height = Image.open(io.BytesIO(image.get_content())).size
    assert width >= 400 and height >= 200
    for url in links_of(body):
        assert url.replace("&", "&amp;") in html.get_content() and url in got.text()
    assert "Normal from: ap-south" in got.text() and "Chart: attached" in got.text()


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_email_errors_never_show_the_smtp_password(config, body):
    with MailServer(login=("firsttoken", "the-right-one")) as server:
        smtp = smtp_config(config, server.port, username="firsttoken", password=SMTP_PASSWORD)
        notifier = build_notifier(EmailConfig(name="m", to=("a@example.com",)), (), Context(smtp=smtp))
        with pytest.raises(DeliveryError) as err:
            notifier.send(body, event="firing", delivery_id="1")
    assert err.value.retryable and "login refused" in str(err.value) and SMTP_PASSWORD not in str(err.value)


def test_an_email_notifier_needs_the_smtp_section(tmp_path):
    spec = config_spec()
    spec["notifiers"] = [
        {"name": "mail", "type": "email", "to": ["oncall@example.com"]},
        {"name": "typo", "type": "email", "to": ["oncall@example.com", "not an address"]},
    ]
    with pytest.raises(ConfigError) as err:
        make_config(spec, tmp_path)
    assert err.value.errors == [
        "notifiers[0].type: type email sends through the smtp: section, which is missing",
        "notifiers[1].to[1]: not an email address (like oncall@example.com), got 'not an address'",
    ]
