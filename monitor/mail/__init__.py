"""The one mailer (DESIGN §16-§18): everything firsttoken mails goes through here.

    message = compose(TEMPLATES, "confirm", context, sender=smtp.sender, to="a@example.com", subject="…")
    with Mailer(smtp, secrets) as mailer:        # one SMTP session for a batch
        mailer.send(message)                      # returns, or raises MailError (retryable or not)

compose.py   an EmailMessage: text and HTML alternatives from Jinja2 templates (HTML autoescaped),
             inline images as a `related` part with a Content-ID (an alert's chart)
send.py      smtplib: plain + STARTTLS or implicit TLS, login when `username` is set, a timeout; errors
             name the server only and never a password (monitor.redact)

Callers: status subscriptions (monitor.subscriptions), and later the `email` notifier and the weekly
report. Each keeps its own templates in its own package and hands `compose` a `Templates`.
"""

from monitor.mail.compose import InlineImage, Templates, compose
from monitor.mail.send import Mailer, MailError, send_mail

__all__ = ["InlineImage", "MailError", "Mailer", "Templates", "compose", "send_mail"]
