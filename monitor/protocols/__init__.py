"""Wire protocols. Importing this package registers every protocol module."""

from monitor.protocols import (  # noqa: F401  (registry entries)
    anthropic,
    azure_openai,
    bedrock,
    gemini,
    ollama,
    openai_chat,
    openai_responses,
)
from monitor.protocols.base import get_protocol, protocol_names

__all__ = ["get_protocol", "protocol_names"]
