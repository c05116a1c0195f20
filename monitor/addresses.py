"""Which listen addresses only this machine can reach: what decides whether a guard (a token, a password) is
needed before something is served (/mcp on `firsttoken run`, the dashboard's SRE pages)."""

from __future__ import annotations

import ipaddress


def is_loopback(host: str) -> bool:
    """`127.0.0.1`, `::1`, `localhost`: only this machine reaches it. `0.0.0.0`, `::` and '' mean every address."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere
