"""What a notification looks like where it lands (DESIGN §18), as a static HTML page (pure).

    html = slack_html(slack_payload(body), image=lambda url: data_uri)     # the Block Kit message
    html = teams_html(teams_payload(body), image=…)                         # the Adaptive Card
    html = email_html(mail, image=…)                                        # the mail's HTML part

A small renderer of exactly the Block Kit and Adaptive Card subset the slack and teams notifiers
emit (header, section with text and fields, image, actions with URL buttons, context; Container,
TextBlock, FactSet, Image, Action.OpenUrl), styled after the clients' light themes. It is what the
docs' screenshots are taken from (docs/notification_screenshots.py, headless Chromium) and what the
browser test reads, so both see what a person would. `image` maps an image URL (the signed chart
link, or the mail's `cid:chart`) to one the page can load: the chart's PNG as a data URI.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping
from email.message import EmailMessage
from typing import Any

Resolve = Callable[[str], str]
PAGE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title><style>{css}</style></head>
<body>{body}</body></html>"""
FONT = "-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif"
SLACK_CSS = f"""
body{{margin:0;background:#fff;font:15px/1.46 {FONT};color:#1d1c1d;}}
.msg{{display:flex;gap:8px;padding:16px 20px;max-width:760px;}}
.avatar{{width:36px;height:36px;border-radius:6px;background:#10a37f;color:#fff;font-weight:700;font-size:14px;
display:flex;align-items:center;justify-content:center;flex:none;}}
.who b{{font-weight:900;}} .app{{background:#e8e8e8;color:#616061;font-size:10px;font-weight:700;padding:1px 3px;
border-radius:2px;margin:0 4px;}} .when{{color:#616061;font-size:12px;}}
.header{{font-size:18px;font-weight:900;margin:6px 0 4px;}}
.section{{margin:4px 0;}} .fields{{display:grid;grid-template-columns:1fr 1fr;gap:8px 16px;margin:8px 0;}}
.image{{margin:8px 0;}} .image .title{{font-size:13px;color:#616061;margin-bottom:4px;}}
.image img{{max-width:100%;border-radius:4px;border:1px solid #ddd;}}
.actions{{display:flex;gap:8px;flex-wrap:wrap;margin:8px 0;}}
.btn{{border:1px solid #bbb;border-radius:4px;padding:4px 12px;font-weight:700;font-size:13px;color:#1d1c1d;
text-decoration:none;background:#fff;}}
.btn.primary{{background:#007a5a;border-color:#007a5a;color:#fff;}} .btn.danger{{background:#e01e5a;border-color:#e01e5a;color:#fff;}}
.context{{font-size:12px;color:#616061;margin-top:4px;}}
"""
TEAMS_CSS = f"""
body{{margin:0;background:#f5f5f5;font:14px/1.4 {FONT};color:#242424;}}
.frame{{padding:20px;max-width:760px;}}
.who{{font-size:12px;color:#616161;margin-bottom:6px;}}
.card{{background:#fff;border-radius:6px;box-shadow:0 1px 3px rgba(0,0,0,.15);padding:14px 16px;}}
.container{{padding:8px 16px;margin:-14px -16px 10px;border-radius:6px 6px 0 0;}}
.container.attention{{background:#fdf3f4;border-top:4px solid #c4314b;}}
.container.warning{{background:#fbf6d9;border-top:4px solid #c19c00;}}
.container.good{{background:#e7f2da;border-top:4px solid #237b4b;}}
.container.emphasis{{background:#f0f0f0;border-top:4px solid #6264a7;}}
.tb{{margin:4px 0;}} .tb.bold{{font-weight:700;}} .tb.medium{{font-size:17px;}} .tb.small{{font-size:12px;}}
.tb.subtle{{color:#707070;}}
table.facts{{border-collapse:collapse;margin:8px 0;}} table.facts td{{padding:2px 14px 2px 0;vertical-align:top;}}
table.facts td.k{{font-weight:700;white-space:nowrap;}}
.img img{{width:100%;margin:8px 0;}}
.actions{{display:flex;gap:8px;flex-wrap:wrap;margin-top:12px;}}
.btn{{flex:1;text-align:center;border:1px solid #d1d1d1;border-radius:4px;padding:6px 10px;color:#6264a7;
font-weight:600;text-decoration:none;}}
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _mrkdwn(text: str) -> str:
    """Slack mrkdwn (the part we write: *bold*, line breaks, &amp; escapes) as HTML."""
    plain = html.escape(html.unescape(text), quote=False)
    return re.sub(r"\*([^*\n]+)\*", r"<b>\1</b>", plain).replace("\n", "<br>")


def _slack_block(block: Mapping[str, Any], image: Resolve) -> str:
    kind = block.get("type")
    if kind == "header":
        return f'<div class="header">{_e(block["text"]["text"])}</div>'
    if kind == "section":
        out = f'<div class="section">{_mrkdwn(block["text"]["text"])}</div>' if block.get("text") else ""
        fields = "".join(f"<div>{_mrkdwn(f['text'])}</div>" for f in block.get("fields", ()))
        return out + (f'<div class="fields">{fields}</div>' if fields else "")
    if kind == "image":
        title = block.get("title", {}).get("text", "")
        src, alt = image(block["image_url"]), block.get("alt_text", "")
        return f'<div class="image"><div class="title">{_e(title)}</div><img src="{_e(src)}" alt="{_e(alt)}"></div>'
    if kind == "actions":
        buttons = "".join(
            f'<a class="btn {_e(b.get("style", ""))}" href="{_e(b["url"])}">{_e(b["text"]["text"])}</a>'
            for b in block.get("elements", ())
        )
        return f'<div class="actions">{buttons}</div>'
    if kind == "context":
        return f'<div class="context">{" ".join(_mrkdwn(e["text"]) for e in block.get("elements", ()))}</div>'
    raise ValueError(f"no preview for a Block Kit {kind!r} block")


def slack_html(payload: Mapping[str, Any], image: Resolve = str, when: str = "9:42 AM") -> str:
    blocks = "".join(_slack_block(b, image) for b in payload["blocks"])
    who = f'<div class="who"><b>firsttoken</b><span class="app">APP</span><span class="when">{_e(when)}</span></div>'
    body = f'<div class="msg"><div class="avatar">ft</div><div>{who}{blocks}</div></div>'
    return PAGE.format(title=_e(payload.get("text", "")), css=SLACK_CSS, body=body)


def _card_element(element: Mapping[str, Any], image: Resolve) -> str:
    kind = element.get("type")
    if kind == "Container":
        items = "".join(_card_element(i, image) for i in element.get("items", ()))
        return f'<div class="container {_e(element.get("style", "default"))}">{items}</div>'
    if kind == "TextBlock":
        classes = ["tb"]
        classes += ["bold"] if element.get("weight") == "Bolder" else []
        classes += [str(element["size"]).lower()] if element.get("size") else []
        classes += ["subtle"] if element.get("isSubtle") else []
        return f'<div class="{" ".join(classes)}">{_e(element["text"])}</div>'
    if kind == "FactSet":
        rows = "".join(
            f'<tr><td class="k">{_e(f["title"])}</td><td>{_e(f["value"])}</td></tr>' for f in element["facts"]
        )
        return f'<table class="facts">{rows}</table>'
    if kind == "Image":
        return f'<div class="img"><img src="{_e(image(element["url"]))}" alt="{_e(element.get("altText", ""))}"></div>'
    raise ValueError(f"no preview for an Adaptive Card {kind!r} element")


def teams_html(payload: Mapping[str, Any], image: Resolve = str) -> str:
    card = payload["attachments"][0]["content"]
    body = "".join(_card_element(e, image) for e in card["body"])
    actions = "".join(
        f'<a class="btn" href="{_e(a["url"])}">{_e(a["title"])}</a>'
        for a in card.get("actions", ())
        if a.get("type") == "Action.OpenUrl"
    )
    frame = f'<div class="frame"><div class="who">Workflows · firsttoken</div><div class="card">{body}'
    frame += f'<div class="actions">{actions}</div></div></div>' if actions else "</div></div>"
    return PAGE.format(title="Teams", css=TEAMS_CSS, body=frame)


def email_html(mail: EmailMessage, image: Resolve = str) -> str:
    """The mail's HTML part as a mail client shows it, its `cid:` images resolved."""
    part = mail.get_body(("html",))
    text = part.get_content() if part is not None else ""
    return re.sub(r'src="(cid:[^"]+)"', lambda m: f'src="{_e(image(m.group(1)))}"', text)


def previews(body: Mapping[str, Any], chart_png: bytes | None) -> dict[str, str]:
    """{"slack-alert", "teams-alert", "email-alert"} -> the page of each, the chart shown from `chart_png`."""
    import base64

    from monitor.alerts.notifiers.email import alert_mail
    from monitor.alerts.notifiers.slack import slack_payload
    from monitor.alerts.notifiers.teams import teams_payload

    data = "data:image/png;base64," + base64.b64encode(chart_png).decode() if chart_png else ""

    def image(url: str) -> str:
        return data or url

    mail = alert_mail(body, sender="firsttoken@example.com", to=["oncall@example.com"], chart=chart_png,
                      delivery_id="preview")  # fmt: skip
    return {
        "slack-alert": slack_html(slack_payload(body), image),
        "teams-alert": teams_html(teams_payload(body), image),
        "email-alert": email_html(mail, image),
    }
