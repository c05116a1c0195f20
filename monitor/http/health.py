"""GET /healthz (and /health): the service's own verdict, as JSON; 503 while it has a problem."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Health:
    ok: bool
    detail: dict[str, Any]


def health_response(start_response, result: Health) -> list[bytes]:
    body = json.dumps({"ok": result.ok, **result.detail}, default=str).encode()
    status = "200 OK" if result.ok else "503 Service Unavailable"
    start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body]
