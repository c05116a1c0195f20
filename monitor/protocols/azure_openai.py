"""`azure-openai`: Azure OpenAI deployments.

Same chunks as OpenAI Chat Completions, plus `prompt_filter_results` chunks
with empty `choices` and `content_filter_results` on every choice: neither
is a token, which the shared parser already knows because it only counts
deltas. What differs is the URL (deployment in the path, `api-version` in the
query) and the `api-key` header.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import quote

from monitor.protocols.base import HttpRequest, ProbeRequest, StreamParser, WireProtocol, join_url, json_body, register
from monitor.protocols.openai_chat import ChatCompletionsParser, chat_body
from monitor.protocols.route import RouteTruth, gateway_route, label

DEFAULT_API_VERSION = "2024-10-21"


@register
class AzureOpenAI(WireProtocol):
    name = "azure-openai"
    genai_provider = "azure.ai.openai"  # OpenTelemetry gen_ai.provider.name
    request_id_headers = ("apim-request-id", "x-request-id", "x-ms-request-id")

    def build_request(self, req: ProbeRequest) -> HttpRequest:
        version = req.options.get("api_version") or DEFAULT_API_VERSION
        path = f"openai/deployments/{quote(req.model, safe='')}/chat/completions?api-version={quote(str(version))}"
        body = chat_body(req, "max_tokens", bool(req.options.get("include_usage", True)))
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if req.api_key:
            if req.options.get("auth") == "bearer":  # Entra ID token instead of a key
                headers["authorization"] = f"Bearer {req.api_key}"
            else:
                headers["api-key"] = req.api_key
        headers.update(req.headers)
        return HttpRequest("POST", join_url(req.base_url, path), headers, json_body(body, req.params))

    def new_parser(self) -> StreamParser:
        return ChatCompletionsParser()

    def route_headers(self, headers: Mapping[str, str]) -> RouteTruth:
        # `x-ms-region`: the Azure region of the resource that answered (the one
        # LiteLLM forwards as llm_provider-x-ms-region, BerriAI/litellm#15232).
        route = gateway_route(headers)
        region = label(headers.get("x-ms-region"))
        return route if route.served_by or not region else replace(route, served_by=region)

    def config_errors(self, options: Mapping[str, Any], has_api_key: bool) -> list[str]:
        auth = options.get("auth")
        if auth is not None and auth not in ("api-key", "bearer"):
            return ["options.auth: must be api-key or bearer"]
        return []
