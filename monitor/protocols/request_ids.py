"""The provider's id for one request, as a sample keeps it (`request_id`, DESIGN §17). Pure.

An SLA credit claim lists the ids of the failed requests, and the provider's
support looks each one up, so the id kept is the one that support asks for,
wherever the response carries it. In order:

1. The protocol's own request-id header (`WireProtocol.request_id_headers`):
   OpenAI `x-request-id`, Anthropic `request-id`, Bedrock `x-amzn-requestid`,
   Azure `apim-request-id`. Present on every response, a 5xx included.
2. The same header forwarded by a LiteLLM proxy, which returns the upstream's
   response headers prefixed `llm_provider-` (docs.litellm.ai/docs/proxy/
   response_headers): the provider's id behind the gateway.
3. The id the body states (`ResponseInfo.request_id`, then `response_id`): an
   Anthropic error event's `request_id`, Groq's `x_groq.id`, else the
   response's own id (Anthropic `msg_…`, OpenAI `chatcmpl-…`, Responses
   `resp_…`, Gemini `responseId`), which is all a Gemini response carries.
   An HTTP error's JSON body gives its top-level `request_id` (Anthropic).
4. LiteLLM's own `x-litellm-call-id`: the gateway's id for the call, kept
   only when nothing names the provider's, so its operator can still find it.

No id anywhere (Ollama, a Gemini HTTP error) stays None, never a made-up one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from monitor.protocols.route import label, lower_headers

GATEWAY_FORWARD_PREFIX = "llm_provider-"  # LiteLLM: upstream response headers, passed on
GATEWAY_CALL_ID = "x-litellm-call-id"  # LiteLLM: the gateway's own id for the call


def pick_request_id(
    headers: Mapping[str, str] | None, names: tuple[str, ...], body_id: str | None = None
) -> str | None:
    """The request id of one response: `names` are the protocol's headers, best first."""
    headers = lower_headers(headers) if headers else {}
    for prefix in ("", GATEWAY_FORWARD_PREFIX):
        for name in names:
            found = label(headers.get(prefix + name))
            if found:
                return found
    return label(body_id) or label(headers.get(GATEWAY_CALL_ID))


def error_body_request_id(body: bytes) -> str | None:
    """A JSON error body's top-level `request_id` (Anthropic's error shape), else None."""
    try:
        data: Any = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    return label(data.get("request_id")) if isinstance(data, dict) else None
