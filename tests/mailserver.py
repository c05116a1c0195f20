"""A real SMTP server on loopback for the mail tests (aiosmtpd): plain, STARTTLS or implicit TLS, with
AUTH when asked, keeping every message it accepts, parsed.

    with MailServer() as server:                       # smtp: {host: 127.0.0.1, port: server.port, starttls: false}
        ...
        (message,) = server.wait_for(1)

`certificate(tmp_path)` makes a self-signed certificate for 127.0.0.1: the server's TLS context and
the client's (which trusts only it).
"""

from __future__ import annotations

import ssl
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from tests.net import free_port


@dataclass(frozen=True)
class Received:
    sender: str
    recipients: tuple[str, ...]
    message: EmailMessage

    def text(self) -> str:
        return self.message.get_body(("plain",)).get_content()

    def html(self) -> str:
        return self.message.get_body(("html",)).get_content()


class _Keep:
    def __init__(self, server: MailServer) -> None:
        self._server = server

    async def handle_DATA(self, server, session, envelope) -> str:
        message = message_from_bytes(envelope.original_content or envelope.content, policy=policy.default)
        with self._server.lock:
            self._server.received.append(Received(envelope.mail_from, tuple(envelope.rcpt_tos), message))
        return "250 OK"


class MailServer:
    def __init__(
        self,
        *,
        starttls: ssl.SSLContext | None = None,  # offer STARTTLS with this context
        implicit_tls: ssl.SSLContext | None = None,  # TLS from the first byte
        login: tuple[str, str] | None = None,  # require AUTH with this user and password
    ) -> None:
        self.received: list[Received] = []
        self.lock = threading.Lock()
        self.port = free_port()
        self.logins: list[str] = []
        kwargs: dict = {}
        if starttls is not None:
            kwargs.update(tls_context=starttls, require_starttls=True)
        if login is not None:
            kwargs.update(authenticator=self._authenticator(login), auth_required=True)
            kwargs["auth_require_tls"] = starttls is not None or implicit_tls is not None
        self._controller = Controller(
            _Keep(self), hostname="127.0.0.1", port=self.port, ssl_context=implicit_tls, **kwargs
        )

    def _authenticator(self, login: tuple[str, str]):
        def check(server, session, envelope, mechanism, auth_data) -> AuthResult:
            ok = (
                isinstance(auth_data, LoginPassword)
                and (auth_data.login.decode(), auth_data.password.decode()) == login
            )
            if ok:
                self.logins.append(auth_data.login.decode())
            return AuthResult(success=ok, handled=False)  # handled=False: aiosmtpd answers 535 itself

        return check

    def __enter__(self) -> MailServer:
        self._controller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._controller.stop()

    def wait_for(self, count: int, timeout_s: float = 10.0) -> list[Received]:
        """The first `count` messages, once they are there (fails after `timeout_s`)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.received) >= count:
                    return list(self.received[:count])
            time.sleep(0.02)
        raise AssertionError(f"expected {count} messages, got {len(self.received)}")

    def to(self, address: str) -> list[Received]:
        with self.lock:
            return [r for r in self.received if address in r.recipients]


def certificate(directory: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """(server context, client context) for a fresh self-signed certificate of 127.0.0.1."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / "smtp-cert.pem", directory / "smtp-key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert_file, key_file)
    client = ssl.create_default_context(cafile=str(cert_file))
    return server, client
