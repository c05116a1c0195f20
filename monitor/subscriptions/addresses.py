"""What a subscriber may give (DESIGN §16): an email address, or a webhook URL; checked before storing.

- email: one plain address (`local@domain.tld`, ASCII, at most 254 characters), no display name, no
  list, nothing a header could be bent with; compared in lower case;
- webhook: an `http(s)://` URL without credentials, at most 2,000 characters; its host must not be a
  loopback, private, link-local or otherwise internal address (a subscriber must not make the status
  server POST into its own network), checked when subscribing and again before each delivery
  (`allow_private` lifts that for a test or a closed deployment).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from urllib.parse import urlsplit, urlunsplit

EMAIL, WEBHOOK = "email", "webhook"
MAX_EMAIL_CHARS = 254
MAX_URL_CHARS = 2000
_LOCAL = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_EMAIL = re.compile(rf"^(?=[^@]{{1,64}}@){_LOCAL}@{_LABEL}(?:\.{_LABEL})*\.[A-Za-z]{{2,63}}\Z")


class InvalidAddress(ValueError):
    """Said to the subscriber as it is: no internal detail in the message."""


def email_address(text: str) -> str:
    address = (text or "").strip()
    if not address:
        raise InvalidAddress("Enter an email address.")
    if len(address) > MAX_EMAIL_CHARS or not _EMAIL.match(address):
        raise InvalidAddress("That does not look like an email address (name@example.com).")
    return address


def webhook_url(text: str, *, allow_private: bool = False) -> str:
    url = (text or "").strip()
    if not url:
        raise InvalidAddress("Enter a webhook URL.")
    if len(url) > MAX_URL_CHARS or any(c.isspace() or ord(c) < 32 for c in url):
        raise InvalidAddress("That does not look like a URL.")
    try:
        parts = urlsplit(url)
        host, _port = parts.hostname, parts.port
    except ValueError:
        raise InvalidAddress("That does not look like a URL.") from None
    if parts.scheme not in ("http", "https") or not host:
        raise InvalidAddress("A webhook URL starts with https:// (or http://) and names a host.")
    if parts.username is not None or parts.password is not None:
        raise InvalidAddress("A webhook URL must not carry a user name or password.")
    if not allow_private and not public_host(host):
        raise InvalidAddress("That host is not reachable from the internet.")
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", parts.query, ""))


def address_key(kind: str, address: str) -> str:
    """What two subscriptions are compared on: an email address in lower case, a URL's scheme and host
    in lower case (its path and query as given)."""
    if kind == EMAIL:
        return address.lower()
    parts = urlsplit(address)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, parts.query, ""))


def public_host(host: str) -> bool:
    """Whether every address `host` resolves to is a public one (False when it does not resolve)."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False
    addresses = {info[4][0] for info in infos}
    return bool(addresses) and all(ipaddress.ip_address(a.split("%", 1)[0]).is_global for a in addresses)
