"""`azure-openai`: `POST /openai/deployments/{deployment}/chat/completions?api-version=…`.

OpenAI chat chunks plus Azure's content filtering, as in the recorded Azure
stream: a first chunk with `choices: []` and `prompt_filter_results` (empty
id, model and created), then `content_filter_results` on every choice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from monitor.simulator.request import HttpError, Request
from monitor.simulator.wire.base import Call, bearer, body_object, dumps
from monitor.simulator.wire.openai_chat import OpenAIChatEncoder, read_chat_call

_SAFE = {"filtered": False, "severity": "safe"}
FILTER_RESULTS: dict[str, Any] = {"hate": _SAFE, "self_harm": _SAFE, "sexual": _SAFE, "violence": _SAFE}
_PREFIX, _SUFFIX = "/openai/deployments/", "/chat/completions"


class AzureOpenAIEncoder(OpenAIChatEncoder):
    protocol = "azure-openai"
    base_path = ""  # deployments live under the resource root, not /v1
    id_header = "apim-request-id"
    _filter_results = FILTER_RESULTS

    @classmethod
    def route(cls, method: str, path: str) -> dict[str, str] | None:
        if path.startswith(_PREFIX) and path.endswith(_SUFFIX):
            deployment = path[len(_PREFIX) : -len(_SUFFIX)]
            if deployment and "/" not in deployment:
                return {"deployment": unquote(deployment)}
        return None

    @classmethod
    def read_call(cls, req: Request, params: Mapping[str, str]) -> Call:
        if not req.query.get("api-version"):
            raise HttpError(400, "Missing required query parameter: api-version")
        key = req.headers.get("api-key")
        if key is None:  # Entra ID tokens come as a bearer token instead
            key = bearer(req.headers)
        return read_chat_call(req, body_object(req), params["deployment"], key)

    @classmethod
    def error_body(cls, status: int, kind: str, message: str, request_id: str) -> tuple[bytes, list[tuple[str, str]]]:
        if kind == "auth" and "key" not in message.lower():
            message = (
                "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a "
                "valid key for an active subscription and use a correct regional API endpoint for your resource."
            )
        return dumps({"error": {"code": str(status), "message": message}}), []

    def open(self) -> bytes:
        prompt_filter = {
            "choices": [],
            "created": 0,
            "id": "",
            "model": "",
            "object": "",
            "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": FILTER_RESULTS}],
        }
        return self.sse(dumps(prompt_filter)) + super().open()
