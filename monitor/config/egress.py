"""A provider's `proxy:` key: an egress proxy URL (its password is a secret, masked everywhere), or `direct`."""

from __future__ import annotations

import contextlib
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AfterValidator, BeforeValidator, WithJsonSchema

from monitor.config.errors import fail, kind
from monitor.config.fields import deferred, is_http_url, keep, learn
from monitor.config.interpolation import Unset

DIRECT = "direct"  # monitor.probe.transport.proxy.DIRECT: none, whatever the environment says


def check_proxy(value: Any, info: Any) -> str:
    if isinstance(value, Unset):  # its password is a credential: only run and probe need it set
        return deferred(value, info)
    if not isinstance(value, str):
        fail(f"expected a proxy URL or 'direct', got {kind(value)}")
    text = value.strip()
    with contextlib.suppress(ValueError):
        learn(urlsplit(text).password or "", info)  # first: the messages below must mask it
    if text.lower() == DIRECT:
        return DIRECT
    if not is_http_url(text):
        fail("not a proxy URL (expected http://[user:password@]host:port or 'direct'), got {got}")
    return text


ProxySetting = Annotated[
    str,
    BeforeValidator(check_proxy),
    AfterValidator(keep),
    WithJsonSchema({"type": "string", "examples": ["http://proxy.internal:3128", "direct"]}),
]
