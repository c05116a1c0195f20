"""Keep secrets out of everything a person or a database can read.

Two layers: the exact secret values the config knows about (API keys, header
values, webhook secrets, anything taken from a `*_KEY`/`*_TOKEN`... variable),
and patterns that look like credentials whatever their source (`Bearer x`,
`sk-...`, `?key=...`), because a provider may echo a key the config never saw
(a proxy's own token, say).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

MASK = "***"
# Shorter "secrets" would mask ordinary words (an empty or 1-char key is a
# config mistake, reported elsewhere, not something to hide everywhere).
MIN_SECRET_LEN = 4

_PATTERNS = (
    re.compile(r"(?i)\b(bearer)(\s+)[A-Za-z0-9._~+/=-]{4,}"),
    re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"),  # OpenAI / Anthropic / OpenRouter style keys
    re.compile(r"\bAIza[0-9A-Za-z_-]{20,}"),  # Google API keys
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),  # AWS access key ids
    # key=..., api_key=..., access_token=..., sig=... in URLs and messages
    re.compile(r"(?i)\b([A-Za-z_-]*(?:key|token|secret|password|sig|signature))(=)([^&\s'\"#,;)]+)"),
)


class Secret(str):
    """A string that prints as `'***'` in any repr (dataclasses, tuples, dicts).

    It is still the real value for everything else (`str()`, f-strings,
    `json.dumps`, concatenation), so code that needs the key just uses it.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"'{MASK}'"


def _ordered(secrets: Iterable[object]) -> tuple[str, ...]:
    # Longest first: if one secret contains another, the whole one goes.
    unique = {str(s) for s in secrets if isinstance(s, str) and len(s) >= MIN_SECRET_LEN}
    return tuple(sorted(unique, key=len, reverse=True))


def _sub_pattern(match: re.Match[str]) -> str:
    if match.re.groups == 3:  # name=value
        return f"{match.group(1)}={MASK}"
    if match.re.groups == 2:  # Bearer <token>
        return f"{match.group(1)}{match.group(2)}{MASK}"
    return MASK


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with each known secret and each credential-looking string masked."""
    if not isinstance(text, str):
        text = str(text)
    for secret in _ordered(secrets):
        if secret in text:
            text = text.replace(secret, MASK)
    for pattern in _PATTERNS:
        text = pattern.sub(_sub_pattern, text)
    return text


class RedactingFilter(logging.Filter):
    """Masks secrets in log records before any handler formats them.

    Attach it to handlers (a filter on a logger does not see records that
    propagate up from child loggers). The message is rendered once here and
    the args dropped: redacting each arg would miss a secret inside an
    exception's or object's `str()`.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.secrets = _ordered(secrets)

    def update(self, secrets: Iterable[str]) -> None:
        self.secrets = _ordered((*self.secrets, *secrets))

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string must not lose the record
            message = f"{record.msg!r} {record.args!r}"
        record.msg = redact(message, self.secrets)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text, self.secrets)
        if record.stack_info:
            record.stack_info = redact(record.stack_info, self.secrets)
        return True


def install_redaction(secrets: Iterable[str], logger: logging.Logger | None = None) -> RedactingFilter:
    """Add one RedactingFilter to every handler of `logger` (default: root)."""
    target = logger or logging.getLogger()
    filt = RedactingFilter(secrets)
    for handler in target.handlers:
        handler.addFilter(filt)
    return filt


def host_of(url: str) -> str:
    """`https://hooks.example.com` from a URL: enough to say where, nothing that authenticates."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or "?"
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{host}{port}"
    except ValueError:
        return "<invalid url>"
