"""Wire protocols. Importing this package imports every module in it, so each protocol
module registers itself (`@register`): adding a protocol is adding one module."""

import importlib
import pkgutil

from monitor.protocols.base import get_protocol, protocol_names

for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")

__all__ = ["get_protocol", "protocol_names"]
