"""The LiteLLM callback's choice (monitor.integrations.route_choice), pure, and its GET /routes feed
against a real HTTP server on loopback: ETag, 304, an unreachable firsttoken."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import anyio
import pytest

from monitor.integrations.litellm_settings import SettingsError, settings_from
from monitor.integrations.route_choice import RouteView, choose, deployment_key, normalize_base, routes_from_json
from monitor.integrations.routes_feed import FeedSettings, RoutesFeed


def dep(name: str, base: str, model: str) -> dict:
    return {"model_name": "g", "litellm_params": {"model": model, "api_base": base}, "model_info": {"id": name}}


A = dep("a", "http://A:8000/v1/", "openai/m-a")
B = dep("b", "http://a-b.example/v1", "openai/m-b")
C = dep("c", "https://c.example/v1", "together_ai/meta/llama")  # firsttoken does not probe this one


def route(base: str, model: str, rank: int, eligible: bool = True, p50: float | None = 100.0, prompt: str = "short"):
    return RouteView(normalize_base(base), model, prompt, rank, eligible, p50)


def ids(chosen: list[dict]) -> list[str]:
    return [d["model_info"]["id"] for d in chosen]


def test_endpoints_and_model_ids_match_however_they_are_spelt():
    assert normalize_base("HTTP://A:8000/v1/") == "http://a:8000"
    assert (
        normalize_base("https://x.example:443/v1?key=1") == normalize_base("https://x.example") == "https://x.example"
    )
    assert normalize_base("https://api.groq.com/openai/v1") == "https://api.groq.com/openai"
    assert normalize_base("not a url") is None and normalize_base(None) is None
    assert deployment_key(A) == ("http://a:8000", "m-a")
    assert deployment_key(C) == ("https://c.example", "meta/llama")
    # No api_base: LiteLLM's default for the provider prefix, as firsttoken's config names it.
    assert deployment_key({"litellm_params": {"model": "groq/llama-3.1-70b-versatile"}}) == (
        normalize_base("https://api.groq.com/openai/v1"), "llama-3.1-70b-versatile")  # fmt: skip
    assert deployment_key({"litellm_params": {"model": "gpt-4o"}}) is None  # no prefix, no api_base: no match


def test_the_group_narrows_to_the_best_ranked_route():
    routes = [route("http://a:8000/v1", "m-a", 1, p50=40), route("http://a-b.example/v1", "m-b", 2, p50=160)]
    assert ids(choose([A, B, C], routes)) == ["a"]


def test_routes_within_the_slack_of_the_best_share_the_load():
    routes = [route("http://a:8000/v1", "m-a", 1, p50=100), route("http://a-b.example/v1", "m-b", 2, p50=115)]
    assert ids(choose([A, B], routes)) == ["a", "b"]
    assert ids(choose([A, B], routes, slack=0.1)) == ["a"]


def test_a_failing_route_is_dropped_even_when_fastest():
    routes = [route("http://a:8000/v1", "m-a", 2, eligible=False, p50=20), route("http://a-b.example/v1", "m-b", 1)]
    assert ids(choose([A, B], routes)) == ["b"]


def test_never_an_empty_list_and_never_a_change_for_an_unknown_group():
    failing = [route("http://a:8000/v1", "m-a", 1, eligible=False), route("http://a-b.example/v1", "m-b", 2, False)]
    assert ids(choose([A, B], failing)) == ["a", "b"]  # every known one failing: LiteLLM's own choice
    assert ids(choose([C], [route("http://a:8000/v1", "m-a", 1)])) == ["c"]  # firsttoken knows nothing of it
    assert ids(choose([A, B], [])) == ["a", "b"]


def test_one_prompt_compares_the_group_never_a_fast_prompt_against_a_slow_one():
    routes = [
        route("http://a:8000/v1", "m-a", 1, p50=900, prompt="rag-4k"),
        route("http://a-b.example/v1", "m-b", 2, p50=1100, prompt="rag-4k"),
        route("http://a-b.example/v1", "m-b", 1, p50=50, prompt="short"),
    ]
    assert ids(choose([A, B], routes)) == ["a"]  # rag-4k covers both deployments
    assert ids(choose([A, B], routes, prompt="short")) == ["b"]


def test_routes_json_without_an_endpoint_is_ignored():
    body = {"routes": [{"provider_model": "m", "rank": 1, "above_floor": True, "ttft_ms": {"p50": 1.0}},
                       {"base_url": "http://h/v1", "provider_model": "m", "prompt": "s", "rank": 1,
                        "above_floor": True, "ttft_ms": {"p50": 1.0}}]}  # fmt: skip
    assert routes_from_json(body) == [RouteView("http://h", "m", "s", 1, True, 1.0)]


class _Routes(BaseHTTPRequestHandler):
    body = json.dumps({"routes": [{"base_url": "http://a:8000/v1", "provider_model": "m-a", "prompt": "short",
                                   "rank": 1, "above_floor": True, "ttft_ms": {"p50": 40.0}}]}).encode()  # fmt: skip
    seen: ClassVar[list[tuple[str, str | None]]] = []

    def do_GET(self) -> None:
        self.seen.append((self.path, self.headers.get("If-None-Match")))
        if self.headers.get("If-None-Match") == '"v1"':
            self.send_response(304)
            self.send_header("ETag", '"v1"')
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("ETag", '"v1"')
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def routes_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Routes)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Routes.seen = []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_the_feed_revalidates_with_its_etag_and_keeps_its_snapshot_on_304(routes_server):
    now = [0.0]
    feed = RoutesFeed(FeedSettings(url=routes_server, refresh_s=1, window="1m", agent="eu"), clock=lambda: now[0])
    assert feed.current() is None  # nothing fetched yet: the gateway's own choice

    async def twice() -> None:
        await feed.refresh_once()
        await feed.refresh_once()
        await feed.aclose()

    anyio.run(twice)
    (first_path, first_tag), (_, second_tag) = _Routes.seen
    assert "window=1m" in first_path and "agent=eu" in first_path and "min_availability=99%25" in first_path
    assert (first_tag, second_tag) == (None, '"v1"') and feed.not_modified == 1
    assert [r.provider_model for r in feed.current()] == ["m-a"]
    now[0] = feed.settings.stale_after_s + 0.1  # no good answer since: stale, so no opinion
    assert feed.current() is None


def test_an_unreachable_firsttoken_gives_no_opinion(routes_server):
    from tests.net import free_port

    feed = RoutesFeed(FeedSettings(url=f"http://127.0.0.1:{free_port()}", refresh_s=1, timeout_s=0.5))

    async def once() -> None:
        await feed.refresh_once()
        await feed.aclose()

    anyio.run(once)
    assert feed.current() is None and feed.fetches == 1


def test_callback_settings_are_checked_with_the_key_named():
    feed, prompt, slack = settings_from({"url": "http://ft:9464", "refresh_s": 5, "window": "2m"})
    assert (feed.url, feed.refresh_s, feed.window, prompt, slack) == ("http://ft:9464", 5.0, "2m", None, 0.2)
    assert settings_from(None, environ={"FIRSTTOKEN_URL": "http://env:1"})[0].url == "http://env:1"
    for raw, message in (
        ({}, "callback_settings.firsttoken.url: "),
        ({"url": "ftp://x"}, "callback_settings.firsttoken.url: "),
        ({"url": "http://x", "refresh_s": "soon"}, "callback_settings.firsttoken.refresh_s: a number"),
        ({"url": "http://x", "refresh_s": 0}, "callback_settings.firsttoken.refresh_s: must be positive"),
        ({"url": "http://x", "window": "forever"}, "callback_settings.firsttoken.window: "),
        ({"url": "http://x", "min_availability": "120%"}, "callback_settings.firsttoken.min_availability: must be"),
        ({"url": "http://x", "colour": "red"}, "callback_settings.firsttoken.colour: unknown key"),
        ("http://x", "callback_settings.firsttoken: a mapping"),
    ):
        with pytest.raises(SettingsError) as err:
            settings_from(raw, environ={})
        assert str(err.value).startswith(message), err.value
