"""Composing a mail: text and HTML alternatives from Jinja2 templates, inline images beside the HTML.

Each caller keeps its templates in its own package (`<package>/templates/`): `<name>.txt.j2` is the
plain-text part (not escaped), `<name>.html.j2` the HTML part (autoescaped: an incident title or an
address can never inject markup). Both may extend this package's `mail_layout.html.j2` /
`mail_layout.txt.j2`, which give every mail the same frame and footer (`footer_links`).

    templates = Templates("monitor.subscriptions")
    message = compose(templates, "update", {"incident": …}, sender="status@example.com",
                      to="a@example.com", subject="…", images=[InlineImage("chart", png_bytes)])

An `InlineImage` becomes a part of a `multipart/related` HTML alternative with its Content-ID; the
HTML shows it with `<img src="cid:chart">` (what the `email` notifier does with an alert's chart).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from email import policy
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Any

from jinja2 import ChoiceLoader, Environment, PackageLoader, StrictUndefined, select_autoescape

MAX_SUBJECT_CHARS = 200
# Lines up to RFC 5322's 998: the standard library folds a header of words with brackets or parentheses
# before its first word, and the receiver unfolds it into a subject that starts with a space.
POLICY = policy.default.clone(max_line_length=998)


@dataclass(frozen=True, slots=True)
class InlineImage:
    cid: str  # referenced from the HTML as `cid:<cid>`
    data: bytes
    subtype: str = "png"
    filename: str | None = None


class Templates:
    """The Jinja2 templates of one package's `templates/` folder (and this package's layouts)."""

    def __init__(self, package: str, folder: str = "templates") -> None:
        loaders = [PackageLoader(package, folder)]
        if package != __package__:
            loaders.append(PackageLoader(__package__, "templates"))
        self.env = Environment(
            loader=ChoiceLoader(loaders),
            autoescape=select_autoescape(enabled_extensions=("html", "html.j2", "xml"), default=False),
            undefined=StrictUndefined,  # a missing value is a bug, not an empty sentence
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=True,
        )

    def render(self, name: str, context: Mapping[str, Any]) -> str:
        return self.env.get_template(name).render(**context)


def one_line(text: str, limit: int = MAX_SUBJECT_CHARS) -> str:
    """A header value: no line breaks (header injection), at most `limit` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def compose(
    templates: Templates,
    name: str,
    context: Mapping[str, Any],
    *,
    sender: str,
    to: str | Iterable[str],
    subject: str,
    images: Iterable[InlineImage] = (),
    headers: Mapping[str, str] | None = None,
    message_id: str | None = None,
) -> EmailMessage:
    """The message `name` (`<name>.txt.j2` and `<name>.html.j2`) rendered with `context`."""
    message = EmailMessage(policy=POLICY)
    message["Subject"] = one_line(subject)
    message["From"] = sender
    message["To"] = to if isinstance(to, str) else ", ".join(to)
    message["Date"] = formatdate(usegmt=True)
    message["Message-ID"] = message_id or make_msgid(domain=sender.rpartition("@")[2] or None)
    for key, value in (headers or {}).items():
        message[key] = one_line(value, 2000)
    message.set_content(templates.render(f"{name}.txt.j2", context))
    message.add_alternative(templates.render(f"{name}.html.j2", context), subtype="html")
    html = message.get_payload()[1]
    for image in images:
        html.add_related(
            image.data, maintype="image", subtype=image.subtype, cid=f"<{image.cid}>", filename=image.filename
        )
    return message
