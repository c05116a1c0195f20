"""Route truth from what a response says about itself (DESIGN §10). Pure.

Parsed once per response, from its headers, then joined with what the stream
named (OpenRouter's chunk `provider`, `system_fingerprint`); the probe's read
loop never sees any of this. Only headers that real services document or were
seen in recordings are read; a response that names nothing gives nulls, never
a guess. Where each header comes from:

- LiteLLM proxy (docs.litellm.ai/docs/proxy/response_headers; recorded in
  shared/fixtures/gateways/litellm_proxy): `x-litellm-model-api-base` names the
  upstream that answered, `x-litellm-model-id` the deployment (used when no
  api-base is sent), `x-litellm-attempted-fallbacks` counts fallbacks.
  Its `x-ratelimit-*` headers are the OpenAI ones, standardised.
- Cloudflare AI Gateway (developers.cloudflare.com/ai-gateway/configuration/
  fallbacks): `cf-aig-step` is the index of the fallback step that answered;
  it says a fallback happened (step > 0) but not who answered.
- Portkey (portkey.ai/docs/api-reference/response-schema):
  `x-portkey-last-used-option-index` is the config target that answered (a
  JSON path). Portkey uses it for load balancing as well as fallback, so it is
  kept as `served_by` and says nothing about a fallback.
- ngrok AI Gateway (ngrok.com/changelog/ai-gateway-response-headers):
  `ngrok-aig-model` names the upstream model, `ngrok-aig-attempts` counts
  attempts (more than one: the first failed over).
- Azure OpenAI: `x-ms-region`, the region of the resource that served
  (azure_openai.py; named in BerriAI/litellm#15232, PwnKit-Labs/pwnkit#85).
- Rate limits: OpenAI-style `x-ratelimit-remaining-requests` / `-tokens`
  (OpenAI, Groq, LiteLLM, and other compatible hosts) and Anthropic's
  `anthropic-ratelimit-requests-remaining` / `-tokens-remaining` (anthropic.py).

Looked for and not found in any response: a header or field naming the
upstream for Groq, Together, Fireworks, Vertex AI, Gemini, or the destination
region of a Bedrock cross-Region inference profile. Those stay null.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

MAX_SERVED_BY_CHARS = 200  # a label, not a document: a hostile header cannot bloat rows


@dataclass(frozen=True, slots=True)
class RouteTruth:
    """Who served one response, as it says; None wherever it says nothing."""

    served_by: str | None = None
    system_fingerprint: str | None = None
    fallback: bool | None = None
    ratelimit_remaining_requests: int | None = None
    ratelimit_remaining_tokens: int | None = None


NO_ROUTE = RouteTruth()

# Header names are matched lower-case: httpx.Headers is case-insensitive, a
# plain mapping (recorded fixtures) is normalised by `lower_headers`.
OPENAI_RATELIMIT = ("x-ratelimit-remaining-requests", "x-ratelimit-remaining-tokens")
ANTHROPIC_RATELIMIT = ("anthropic-ratelimit-requests-remaining", "anthropic-ratelimit-tokens-remaining")


def lower_headers(headers: Mapping[str, str]) -> Mapping[str, str]:
    if hasattr(headers, "multi_items"):  # httpx.Headers: already case-insensitive
        return headers
    return {str(k).lower(): str(v) for k, v in headers.items()}


def gateway_route(headers: Mapping[str, str], ratelimit: tuple[str, str] = OPENAI_RATELIMIT) -> RouteTruth:
    """What gateways in front of any protocol say, plus the rate-limit headers."""
    served_by = clean_url(headers.get("x-litellm-model-api-base")) or label(headers.get("x-litellm-model-id"))
    served_by = served_by or label(headers.get("ngrok-aig-model"))
    served_by = served_by or label(headers.get("x-portkey-last-used-option-index"))
    fallback = _count_above(headers.get("x-litellm-attempted-fallbacks"), 0)
    if fallback is None:
        fallback = _count_above(headers.get("cf-aig-step"), 0)
    if fallback is None:
        fallback = _count_above(headers.get("ngrok-aig-attempts"), 1)
    return RouteTruth(
        served_by=served_by,
        fallback=fallback,
        ratelimit_remaining_requests=as_count(headers.get(ratelimit[0])),
        ratelimit_remaining_tokens=as_count(headers.get(ratelimit[1])),
    )


def join_route(
    headers: RouteTruth,
    stream_served_by: str | None,
    system_fingerprint: str | None,
    pinned: str | None,
) -> RouteTruth:
    """The response's route: the stream's own naming wins over a gateway header
    (it is the innermost hop), and a pinned route that did not answer is a fallback."""
    served_by = label(stream_served_by) or headers.served_by
    fallback = headers.fallback
    if fallback is not True and pinned and served_by:
        fallback = not same_route(served_by, pinned)
    return replace(headers, served_by=served_by, system_fingerprint=label(system_fingerprint), fallback=fallback)


def same_route(served_by: str, pinned: str) -> bool:
    """OpenRouter pins by slug (`deepinfra`, `google-vertex`, `deepinfra/fp8`) but
    names the provider in chunks by display name (`DeepInfra`, `Google`): compare
    letters and digits only, ignore a `/variant`, and let one be a prefix of the other."""
    a, b = _route_key(served_by), _route_key(pinned)
    return bool(a and b) and (a == b or a.startswith(b) or b.startswith(a))


def _route_key(value: str) -> str:
    return re.sub(r"[^a-z0-9]", "", value.split("/", 1)[0].lower())


def openrouter_pin(params: Mapping[str, Any]) -> str | None:
    """`params.provider.order[0]`: the route an OpenRouter request asked for first."""
    provider = params.get("provider") if isinstance(params, Mapping) else None
    order = provider.get("order") if isinstance(provider, Mapping) else None
    if isinstance(order, list | tuple) and order and isinstance(order[0], str) and order[0]:
        return order[0]
    return None


def label(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = value.strip()
    return text[:MAX_SERVED_BY_CHARS] or None


def clean_url(value: str | None) -> str | None:
    """An api-base URL without credentials, query or fragment: a key can ride in either."""
    text = label(value)
    if text is None:
        return None
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    if not parts.scheme or not parts.hostname:
        return text if "@" not in text and "?" not in text else None
    host = parts.hostname + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def as_count(value: str | None) -> int | None:
    if value is None:
        return None
    text = str(value).strip()
    try:
        number = int(text)
    except ValueError:
        try:
            number = int(float(text))
        except (ValueError, OverflowError):  # "inf", "nan", junk
            return None
    return number if number >= 0 else None


def _count_above(value: str | None, threshold: int) -> bool | None:
    count = as_count(value)
    return None if count is None else count > threshold
