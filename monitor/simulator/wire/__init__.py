"""The simulated wire protocols, found by request path as real providers route them.

Every module of this package is imported and each `WireEncoder` subclass that names
a `protocol` is an encoder: adding a protocol to the simulator is adding one module.
"""

from __future__ import annotations

import importlib
import pkgutil

from monitor.simulator.wire.base import Call, Outcome, StreamInfo, WireEncoder

# Filled (in place, so importers' references stay live) by `discover()`.
ENCODERS: list[type[WireEncoder]] = []
BY_PROTOCOL: dict[str, type[WireEncoder]] = {}


def discover() -> None:
    """Import every module of this package; each `WireEncoder` subclass naming a `protocol` serves it."""
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    found: list[type[WireEncoder]] = []
    pending = list(WireEncoder.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if "protocol" in vars(cls):
            found.append(cls)
    ENCODERS[:] = sorted(found, key=lambda cls: cls.protocol)
    BY_PROTOCOL.clear()
    BY_PROTOCOL.update((cls.protocol, cls) for cls in ENCODERS)


discover()


def find_route(method: str, path: str) -> tuple[type[WireEncoder], dict[str, str]] | None:
    """The protocol serving `path` (any method) and its path parameters."""
    for cls in ENCODERS:
        params = cls.route(method, path)
        if params is not None:
            return cls, params
    return None


def base_path(protocol: str) -> str:
    """The base-URL path of `protocol` on the simulator (KeyError for an unknown one)."""
    return BY_PROTOCOL[protocol].base_path


__all__ = [
    "BY_PROTOCOL",
    "ENCODERS",
    "Call",
    "Outcome",
    "StreamInfo",
    "WireEncoder",
    "base_path",
    "discover",
    "find_route",
]
