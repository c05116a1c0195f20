"""Conditional GET on the listen address (monitor.http.conditional): ETag, If-None-Match, max-age."""

from __future__ import annotations

import httpx

from monitor.http.app import build_app
from monitor.http.conditional import etag_for, matches, max_age_s
from monitor.http.health import Health
from monitor.http.server import StatusServer


def test_if_none_match_compares_weakly_and_takes_lists_and_star():
    tag = etag_for(b"body")
    assert tag == etag_for(b"body") != etag_for(b"other")
    assert matches(tag, tag) and matches(f"W/{tag}", tag) and matches(f'"x", {tag}', tag) and matches("*", tag)
    assert not matches(None, tag) and not matches('"x"', tag)


def test_max_age_is_the_fastest_probe_interval_within_bounds():
    assert max_age_s([300.0, 60.0, 120.5]) == 60
    assert max_age_s([0.5]) == 1 and max_age_s([7200.0]) == 300 and max_age_s([]) == 15


def test_status_json_answers_304_to_its_etag_and_errors_are_never_tagged():
    pages = {"/status.json": ("200 OK", "application/json", b'{"status": "ok"}'),
             "/badge/x.svg": ("404 Not Found", "image/svg+xml", b"<svg/>")}  # fmt: skip
    app = build_app(lambda: [], lambda: Health(True, {}), public=pages.get, max_age_s=lambda: 30)
    server = StatusServer("127.0.0.1", 0, app)
    server.start()
    try:
        base = f"http://127.0.0.1:{server.port}"
        first = httpx.get(base + "/status.json")
        assert first.headers["cache-control"] == "public, max-age=30" and first.headers["access-control-allow-origin"]
        again = httpx.get(base + "/status.json", headers={"If-None-Match": first.headers["etag"]})
        assert again.status_code == 304 and again.content == b""
        missing = httpx.get(base + "/badge/x.svg")
        assert missing.status_code == 404 and "etag" not in missing.headers
    finally:
        server.stop()
