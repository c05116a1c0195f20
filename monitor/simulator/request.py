"""HTTP/1.1 request heads and the request value the handlers see."""

from __future__ import annotations

import json
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 16 * 1024 * 1024
_EXTRA_REASONS = {529: "Site Overloaded"}


class HttpError(Exception):
    """A request we cannot serve; answered with `status` and a JSON error body."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(slots=True)
class Request:
    method: str
    target: str  # as sent: path and query
    path: str  # undecoded; routes decode the segments they take
    query: dict[str, str]
    headers: dict[str, str]  # lower-case names
    body: bytes
    version: str
    arrival_ns: int  # perf_counter_ns() of the read that completed the request
    keep_alive: bool

    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise HttpError(400, f"request body is not valid JSON: {exc}") from None


def reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return _EXTRA_REASONS.get(status, "Unknown")


def parse_head(head: bytes) -> tuple[str, str, str, dict[str, str]]:
    try:
        text = head.decode("latin-1")
    except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes anything
        raise HttpError(400, "undecodable request head") from None
    request_line, *header_lines = text.split("\r\n")
    parts = request_line.split(" ")
    if len(parts) != 3 or not parts[0].isalpha() or not parts[1] or not parts[2].startswith("HTTP/1."):
        raise HttpError(400, f"malformed request line: {request_line[:100]!r}")
    method, target, version = parts
    headers: dict[str, str] = {}
    for line in header_lines:
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip() or line[0] in " \t":
            raise HttpError(400, f"malformed header line: {line[:100]!r}")
        key = name.lower()
        value = value.strip()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return method.upper(), target, version, headers


def content_length(headers: dict[str, str]) -> int:
    raw = headers.get("content-length")
    if raw is None:
        return 0
    try:
        n = int(raw)
    except ValueError:
        raise HttpError(400, f"bad content-length: {raw!r}") from None
    if n < 0:
        raise HttpError(400, f"bad content-length: {raw!r}")
    if n > MAX_BODY_BYTES:
        raise HttpError(413, "request body too large")
    return n
