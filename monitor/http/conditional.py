"""Conditional GET for the JSON routes of the listen address (/routes, /status.json).

A gateway that polls every few seconds should cost one hash and a 304 when nothing
changed: the ETag is a digest of the body, so the same ranking gives the same tag on
any replica, and `Cache-Control: max-age` follows the probe cadence (nothing new can
be measured sooner than the fastest target probes).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable

MIN_MAX_AGE_S = 1
MAX_MAX_AGE_S = 300  # a slow cadence still lets a client see an alert-driven change within 5 minutes


def etag_for(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def matches(if_none_match: str | None, etag: str) -> bool:
    """RFC 9110 §13.1.2: weak comparison; `*` matches any current representation."""
    if not if_none_match:
        return False
    wanted = if_none_match.strip()
    if wanted == "*":
        return True
    return any(_opaque(tag) == _opaque(etag) for tag in wanted.split(","))


def _opaque(tag: str) -> str:
    tag = tag.strip()
    return tag[2:] if tag.startswith("W/") else tag


def max_age_s(intervals_s: Iterable[float]) -> int:
    """The shortest probe interval, in whole seconds, within [1, 300]; 15 s with no targets."""
    shortest = min(intervals_s, default=15.0)
    return max(MIN_MAX_AGE_S, min(MAX_MAX_AGE_S, math.floor(shortest)))


def cache_headers(etag: str, max_age: int) -> list[tuple[str, str]]:
    return [("ETag", etag), ("Cache-Control", f"public, max-age={max_age}")]


def conditional_response(environ, start_response, status: str, headers: list, body: bytes, max_age: int) -> list[bytes]:
    """200 with an ETag, or 304 with no body when the client already holds this body (a poller's
    `If-None-Match`)."""
    tag = etag_for(body)
    headers = [*headers, *cache_headers(tag, max_age)]
    if matches(environ.get("HTTP_IF_NONE_MATCH"), tag):
        start_response("304 Not Modified", [h for h in headers if h[0] != "Content-Type"])
        return []
    start_response(status, [*headers, ("Content-Length", str(len(body)))])
    return [body]
