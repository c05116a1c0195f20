"""GET /routes answers shared for half the probe cadence (monitor.http.answer_cache); /mcp built lazily (monitor.http.mcp)."""

from __future__ import annotations

from monitor.http.answer_cache import AnswerCache, ttl_for


def test_pollers_within_the_ttl_share_one_ranking_and_errors_are_never_kept():
    now = [0.0]
    answers = iter([(200, b"a"), (503, b"down"), (200, b"b"), (200, b"c")])
    calls = []

    def handle(query: str):
        calls.append(query)
        return next(answers)

    cache = AnswerCache(handle, ttl_s=lambda: 2.0, clock=lambda: now[0])
    assert cache("window=1m") == (200, b"a")
    now[0] = 1.9
    assert cache("window=1m") == (200, b"a") and calls == ["window=1m"]
    assert cache("window=5m") == (503, b"down")  # another query: computed; an error: not kept
    assert cache("window=5m") == (200, b"b")
    now[0] = 2.0
    assert cache("window=1m") == (200, b"c")  # expired
    assert calls == ["window=1m", "window=5m", "window=5m", "window=1m"]


def test_the_ttl_is_half_the_cadence_and_never_above_five_seconds():
    assert ttl_for(1) == 0.5 and ttl_for(60) == 5.0


def test_a_lazy_app_is_built_once_on_first_use_and_answers_404_when_it_cannot_be():
    from monitor.http.mcp import LazyApp

    builds = []

    def build():
        builds.append(1)
        return lambda environ, start_response: (start_response("200 OK", []), [b"mcp"])[1]

    statuses = []
    lazy = LazyApp(build, b"no mcp")
    assert builds == []  # nothing paid before the first request
    assert lazy({}, lambda s, h: statuses.append(s)) == [b"mcp"] and lazy({}, lambda s, h: statuses.append(s))
    assert builds == [1] and statuses == ["200 OK", "200 OK"]
    missing = LazyApp(lambda: None, b"no mcp")
    assert missing({}, lambda s, h: statuses.append(s)) == [b"no mcp"] and statuses[-1].startswith("404")
