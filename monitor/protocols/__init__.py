"""Wire protocols. Importing this package registers every protocol module."""

from monitor.protocols import azure_openai, openai_chat  # noqa: F401  (registry entries)
from monitor.protocols.base import get_protocol, protocol_names

__all__ = ["get_protocol", "protocol_names"]
