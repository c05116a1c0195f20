"""Sending mail through the config's `smtp:` server (DESIGN §16): smtplib, nothing else.

- `tls: true`: TLS from the first byte (SMTPS, port 465); else a plain connection upgraded with
  STARTTLS when `use_starttls` (the default unless `tls`; port 587), refused if the server cannot;
  `starttls: false` sends in the clear (a relay on loopback, a test server).
- `username` set: AUTH after the upgrade, never before it unless the config turned TLS off.
- `timeout` bounds every socket operation; a session is reused for a batch (`with Mailer(...)`),
  and reopened once if the server dropped it between two messages.

Errors are `MailError`s: `retryable` False when the server refused the message or its recipients
for good (a 5xx), True for everything that may work later (connection, timeout, 4xx, login). Their
text names the server (`smtp.example.com:587`) and the server's reply, redacted with the password
and the caller's secrets: it ends up in logs and in outbox rows.
"""

from __future__ import annotations

import smtplib
import ssl
from collections.abc import Iterable
from email.message import EmailMessage
from typing import Any

from monitor.redact import redact

MAX_REPLY_CHARS = 300


class MailError(Exception):
    """A message that did not go out; `retryable` False means trying again cannot help."""

    def __init__(self, message: str, *, retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable


class Mailer:
    """An SMTP session for the config's `smtp:` (`monitor.config.status_site.Smtp`).

    Connects on the first `send`; `close` (or leaving the `with` block) says QUIT. `ssl_context`
    replaces the system's trust store (a test server's own certificate)."""

    def __init__(self, smtp: Any, secrets: Iterable[str] = (), *, ssl_context: ssl.SSLContext | None = None) -> None:
        self._smtp = smtp
        self._secrets = (*secrets, *((str(smtp.password),) if smtp.password else ()))
        self._context = ssl_context
        self._session: smtplib.SMTP | None = None
        self.where = f"{smtp.host}:{smtp.port}"

    def __enter__(self) -> Mailer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send(self, message: EmailMessage) -> None:
        """Send one message (its From/To/Cc/Bcc headers say to whom), or raise MailError."""
        try:
            if self._session is not None and not self._alive(self._session):
                self._drop()
            if self._session is None:
                self._session = self._connect()
            refused = self._session.send_message(message)
        except smtplib.SMTPRecipientsRefused as exc:
            self._drop()
            codes = [code for code, _ in exc.recipients.values()]
            raise self._error("refused every recipient", exc, retryable=any(c < 500 for c in codes)) from None
        except smtplib.SMTPResponseException as exc:
            self._drop()
            raise self._error("refused the message", exc, retryable=exc.smtp_code < 500) from None
        except (smtplib.SMTPException, OSError) as exc:  # connect, TLS, timeout, dropped session
            self._drop()
            raise self._error("unreachable", exc, retryable=True) from None
        if refused:
            raise MailError(f"smtp {self.where}: refused {len(refused)} recipient(s)", retryable=False)

    def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            try:
                session.quit()
            except (smtplib.SMTPException, OSError):
                session.close()

    # ------------------------------------------------------------------ internals
    def _connect(self) -> smtplib.SMTP:
        smtp = self._smtp
        timeout = float(smtp.timeout_s)
        context = self._context or ssl.create_default_context()
        if smtp.tls:
            session: smtplib.SMTP = smtplib.SMTP_SSL(smtp.host, smtp.port, timeout=timeout, context=context)
        else:
            session = smtplib.SMTP(smtp.host, smtp.port, timeout=timeout)
        try:
            session.ehlo()
            if not smtp.tls and smtp.use_starttls:
                if not session.has_extn("starttls"):
                    raise MailError(
                        f"smtp {self.where}: the server offers no STARTTLS (set `starttls: false` only for a "
                        "trusted relay)",
                        retryable=True,
                    )
                session.starttls(context=context)
                session.ehlo()
            if smtp.username:
                session.login(str(smtp.username), str(smtp.password or ""))
        except smtplib.SMTPAuthenticationError as exc:
            session.close()
            raise self._error("login refused", exc, retryable=True) from None
        except BaseException:
            session.close()
            raise
        return session

    @staticmethod
    def _alive(session: smtplib.SMTP) -> bool:
        try:
            return session.noop()[0] == 250
        except (smtplib.SMTPException, OSError):
            return False

    def _drop(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            session.close()

    def _error(self, what: str, exc: BaseException, *, retryable: bool) -> MailError:
        if isinstance(exc, MailError):
            return exc
        if isinstance(exc, smtplib.SMTPResponseException):
            detail = _reply(exc.smtp_code, exc.smtp_error)
        elif isinstance(exc, smtplib.SMTPRecipientsRefused):
            detail = "; ".join(_reply(code, reply) for code, reply in exc.recipients.values())
        elif isinstance(exc, TimeoutError):
            detail = f"timed out after {float(self._smtp.timeout_s):g}s"
        else:
            detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        detail = redact(detail, self._secrets)[:MAX_REPLY_CHARS]
        return MailError(f"smtp {self.where}: {what}: {detail}", retryable=retryable)


def _reply(code: int, text: bytes | str) -> str:
    return f"{code} {text.decode(errors='replace') if isinstance(text, bytes) else text}"


def send_mail(smtp: Any, message: EmailMessage, secrets: Iterable[str] = (), **kwargs: Any) -> None:
    """One message in a session of its own."""
    with Mailer(smtp, secrets, **kwargs) as mailer:
        mailer.send(message)
