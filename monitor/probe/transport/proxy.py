"""Which egress proxy a probe goes through: the provider's `proxy:`, else the environment, as curl does.

`HTTPS_PROXY` for https:// providers, `HTTP_PROXY` for http:// ones, `ALL_PROXY`
for either, lowercase names first; `NO_PROXY` (host names, domain suffixes, IP
addresses, `host:port`, `*`) sends a host direct. A provider's `proxy:` wins
over the environment: a URL, or `direct` for none.

Through a proxy the connection phases mean something else, and the sample
says so (`via_proxy`, the proxy's origin without credentials): `dns_ms` and
`connect_ms` are the proxy's; for an https:// provider `tls_ms` is the
handshake with the provider inside the CONNECT tunnel, and `ttfb_ms` and
`ttft_ms` run from the request, as always. An http:// provider is forwarded
by the proxy: no tunnel, no TLS.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

DIRECT = "direct"


@dataclass(frozen=True, slots=True)
class Proxy:
    url: str  # without credentials
    username: str | None = None
    password: str | None = None

    @property
    def label(self) -> str:
        """What a sample records: the proxy's origin, never its credentials."""
        return self.url


def parse_proxy(text: str) -> Proxy:
    parts = urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("a proxy is http://[user:password@]host:port (or https://)")
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    username = unquote(parts.username) if parts.username is not None else None
    password = unquote(parts.password) if parts.password is not None else None
    return Proxy(f"{parts.scheme}://{netloc}", username, password)


def environment_proxies(environ: Mapping[str, str]) -> dict[str, str]:
    """The `*_PROXY` variables by scheme (`http`, `https`, `all`, `no`), lowercase names winning."""
    proxies: dict[str, str] = {}
    for name, value in environ.items():
        lower = name.lower()
        if value and lower.endswith("_proxy"):
            scheme = lower[: -len("_proxy")]
            if scheme not in proxies or name == lower:
                proxies[scheme] = value
    return proxies


def _bypassed(host: str, port: int | None, no_proxy: str | None) -> bool:
    if not no_proxy:
        return False
    if no_proxy.strip() == "*":
        return True
    hostport = f"{host}:{port}" if port else host
    # The standard library's NO_PROXY reading (suffixes, leading dots, host:port), as requests uses.
    return urllib.request.proxy_bypass_environment(hostport, {"no": no_proxy})


def proxy_for(url: str, setting: str | None, env_proxies: Mapping[str, str]) -> Proxy | None:
    """The proxy for a request to `url`: None for a direct connection. Pure (the environment is passed in)."""
    if setting is not None:
        return None if setting.strip().lower() == DIRECT else parse_proxy(setting)
    parts = urlsplit(url)
    chosen = env_proxies.get(parts.scheme) or env_proxies.get("all")
    if not chosen or _bypassed(parts.hostname or "", parts.port, env_proxies.get("no")):
        return None
    if "://" not in chosen:  # HTTPS_PROXY=proxy:3128, as curl allows
        chosen = f"http://{chosen}"
    return parse_proxy(chosen)


def proxy_passwords(environ: Mapping[str, str]) -> frozenset[str]:
    """The passwords in the environment's proxy URLs: secrets to mask, like the config's."""
    found = set()
    for scheme, value in environment_proxies(environ).items():
        if scheme == "no":
            continue
        try:
            proxy = parse_proxy(value if "://" in value else f"http://{value}")
        except ValueError:
            continue
        if proxy.password:
            found.add(proxy.password)
    return frozenset(found)
