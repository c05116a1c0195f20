"""Per-target recent percentiles (/metrics' firsttoken_target_*)."""

from __future__ import annotations

import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

from monitor.agent.metrics_window import WindowQuantiles, quantile


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("q", [0.0, 0.1, 0.5, 0.9, 0.99, 1.0])
def test_quantile_interpolates_like_numpy(q):
    values = sorted([0.31, 0.12, 0.5, 0.12, 2.0, 0.7, 0.33])
    assert quantile(values, q) == pytest.approx(np.quantile(values, q))


def test_the_window_keeps_five_minutes_and_a_quiet_target_disappears():
    clock = Clock()
    family = WindowQuantiles("t_seconds", "Doc", ("target",), (0.5, 0.99), window_s=300, clock=clock)
    for value in (0.1, 0.2, 0.3):
        family.observe(("a",), value)
        clock.now += 60
    family.observe(("b",), 1.0)
    parsed = {
        (s.labels["target"], s.labels["quantile"]): s.value
        for f in text_string_to_metric_families(family.render())
        for s in f.samples
    }
    assert parsed == {("a", "0.5"): 0.2, ("a", "0.99"): pytest.approx(0.298), ("b", "0.5"): 1.0, ("b", "0.99"): 1.0}
    clock.now += 181  # a's first two samples (60 and 120 s older than its third) leave the window
    assert 't_seconds{quantile="0.5",target="a"} 0.3\n' in family.render()
    clock.now += 600  # nothing for ten minutes: no series, not a stale value
    assert family.render() == "# HELP t_seconds Doc\n# TYPE t_seconds summary\n"
