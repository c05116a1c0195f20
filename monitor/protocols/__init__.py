"""Wire protocols: one module each, registered by `@register` when imported.

Importing this package imports every module in it (`base.discover`), so adding a
protocol is adding one module here (and its simulator encoder in
`monitor/simulator/wire/`); no table elsewhere names it.
"""

from monitor.protocols.base import discover, get_protocol, protocol_names

discover()

__all__ = ["discover", "get_protocol", "protocol_names"]
