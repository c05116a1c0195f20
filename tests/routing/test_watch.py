"""`firsttoken routes --watch`: what counts as a change between two rankings (monitor.routing.watch)."""

from __future__ import annotations

from monitor.routing.rank import RouteStats, rank_routes
from monitor.routing.watch import changes


def stats(provider: str, p50: float, ok: int = 100):
    return RouteStats(
        target=f"{provider}/m@r:short", provider=provider, model="m", canonical_model="m", region="r",
        prompt="short", samples=100, ok=ok, ttft_p50_ms=p50,
    )  # fmt: skip


def test_figures_drifting_are_not_changes():
    before = rank_routes([stats("a", 100), stats("b", 200)])
    assert changes(before, rank_routes([stats("a", 104), stats("b", 190)])) == []


def test_rank_floor_new_and_gone_are():
    before = rank_routes([stats("a", 100), stats("b", 200), stats("c", 300)])
    after = rank_routes([stats("a", 250), stats("b", 200, ok=90), stats("d", 50)])
    found = {(c.route.stats.provider, c.kind) for c in changes(before, after)}
    assert found == {("a", "rank"), ("b", "floor"), ("d", "new"), ("c", "gone")}
    lines = {c.route.stats.provider: c.line() for c in changes(before, after)}
    assert lines["b"] == "m short: b/m@r:short below the availability floor, rank 2 -> 3 (p50 200 ms, 90.0%)"
    assert lines["a"] == "m short: a/m@r:short rank 1 -> 2 (p50 250 ms, 100.0%)"
    assert lines["d"] == "m short: d/m@r:short new at rank 1 (p50 50 ms, 100.0%)"
    assert lines["c"] == "m short: c/m@r:short gone (no samples in the window)"
