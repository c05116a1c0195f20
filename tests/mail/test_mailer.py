"""The one mailer (monitor.mail) against a real SMTP server on loopback: plain, STARTTLS, implicit TLS,
login; composed text + HTML with an inline image; errors that name the server and never a password."""

from __future__ import annotations

import pytest

from monitor.config.status_site import Smtp
from monitor.mail import InlineImage, Mailer, MailError, Templates, compose, send_mail
from monitor.mail.compose import one_line
from monitor.redact import Secret
from tests.mailserver import MailServer, certificate
from tests.net import free_port

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
TEMPLATES = Templates("monitor.subscriptions")


def smtp(port: int, **kw) -> Smtp:
    values = {"host": "127.0.0.1", "port": port, "sender": "status@example.com", "timeout_s": 5.0} | kw
    return Smtp(**values)


def message(to: str = "reader@example.com", **kw):
    context = {"site_title": "Acme <status>", "links": {"confirm": "https://s.example/c?token=1.0.x"},
               "footer_links": [("Unsubscribe", "https://s.example/u?t=1")]}  # fmt: skip
    return compose(TEMPLATES, "confirm", context, sender="status@example.com", to=to, subject="Confirm", **kw)


def test_compose_renders_text_and_escaped_html_alternatives_with_an_inline_image():
    mail = message(images=[InlineImage("chart", PNG)], headers={"List-Unsubscribe": "<https://s.example/u>"})
    assert mail.get_content_type() == "multipart/alternative"
    text, html = mail.get_body(("plain",)).get_content(), mail.get_body(("html",)).get_content()
    assert "Acme <status>" in text and "https://s.example/c?token=1.0.x" in text
    assert "Acme &lt;status&gt;" in html and "<status>" not in html  # autoescaped
    related = mail.get_payload()[1]
    assert related.get_content_type() == "multipart/related"
    (image,) = [p for p in related.iter_parts() if p.get_content_type() == "image/png"]
    assert image["Content-ID"] == "<chart>" and image.get_content() == PNG
    assert mail["List-Unsubscribe"] == "<https://s.example/u>" and mail["Message-ID"].endswith("@example.com>")


def test_subjects_are_one_line():
    assert one_line("Down\r\nBcc: victim@example.com") == "Down Bcc: victim@example.com"
    assert len(one_line("x" * 500)) == 200


def test_plain_smtp_delivers_and_reuses_one_session():
    with MailServer() as server, Mailer(smtp(server.port, starttls=False)) as mailer:
        mailer.send(message("a@example.com"))
        mailer.send(message("b@example.com"))
        first, second = server.wait_for(2)
    assert first.recipients == ("a@example.com",) and second.recipients == ("b@example.com",)
    assert first.sender == "status@example.com" and "https://s.example/c?token=1.0.x" in first.text()


def test_starttls_with_login(tmp_path):
    server_tls, client_tls = certificate(tmp_path)
    password = Secret("s3cret-smtp-pass")
    with MailServer(starttls=server_tls, login=("status", str(password))) as server:
        send_mail(smtp(server.port, username="status", password=password), message(), ssl_context=client_tls)
        (got,) = server.wait_for(1)
    assert server.logins == ["status"] and got.recipients == ("reader@example.com",)


def test_implicit_tls(tmp_path):
    server_tls, client_tls = certificate(tmp_path)
    with MailServer(implicit_tls=server_tls) as server:
        send_mail(smtp(server.port, tls=True), message(), ssl_context=client_tls)
        assert len(server.wait_for(1)) == 1


def test_starttls_refuses_a_server_it_cannot_trust(tmp_path):
    server_tls, _client = certificate(tmp_path)
    with MailServer(starttls=server_tls) as server, pytest.raises(MailError) as caught:
        send_mail(smtp(server.port), message())  # the system's trust store: the self-signed certificate fails
    assert caught.value.retryable and f"127.0.0.1:{server.port}" in str(caught.value)
    assert server.received == []


def test_a_refused_login_is_retryable_and_never_says_the_password(tmp_path):
    server_tls, client_tls = certificate(tmp_path)
    wrong = Secret("wrong-password-123")
    with MailServer(starttls=server_tls, login=("status", "right")) as server, pytest.raises(MailError) as caught:
        send_mail(smtp(server.port, username="status", password=wrong), message(), ssl_context=client_tls)
    assert caught.value.retryable and "login refused" in str(caught.value)
    assert "wrong-password-123" not in str(caught.value) and "wrong-password-123" not in repr(caught.value)


def test_nobody_listening_is_retryable():
    port = free_port()
    with pytest.raises(MailError) as caught:
        send_mail(smtp(port, starttls=False, timeout_s=2.0), message())
    assert caught.value.retryable and str(caught.value).startswith(f"smtp 127.0.0.1:{port}: unreachable")
