"""Cache probes (DESIGN §13): which samples a rule watches, and the hit-ratio threshold. Pure.

A cache target's samples come in cold/warm pairs. A latency or tps rule that names no
`cache_state` watches the cold half, the figure comparable with the target's other probes and
with targets that are not cache probes; `cache_state: warm` watches the warm half (a warm TTFT
regression is a cache that stopped saving). error_rate counts every probe. `cache_hit_ratio`
is the share of warm probes that hit (`Sample.cache_hit`) over the window.
"""

from __future__ import annotations

from monitor.alerts.detectors.base import DetectorSettings, Evaluation
from monitor.alerts.detectors.rates import _Detector

WARM = "warm"


def watches(settings: DetectorSettings, cache_state: str | None) -> bool:
    """Does a rule with these settings take a sample of this `cache_state` (None: not a cache probe)?"""
    if settings.metric == "cache_hit_ratio":
        return cache_state == WARM
    if settings.cache_state is not None:
        return cache_state == settings.cache_state
    if settings.metric == "error_rate" or settings.kind == "change":
        return True
    return cache_state != WARM


class HitRatioThreshold(_Detector):
    """hits / warm probes over `window_s` (at least `min_samples`), against `below` (or `above`).

    Fed 1.0 for a hit, 0.0 for a miss and None for a warm probe that failed or could not be
    judged, which is not evaluated: an outage is error_rate's to report, not the cache's."""

    kind = "hit_ratio_threshold"

    def observe(self, ts: float, value: float | None) -> Evaluation:
        if value is None:
            return Evaluation(ts, self.life.state, evaluated=False, baseline=self._bound())
        self.window.add(ts, 1.0 if value > 0 else 0.0)
        n = len(self.window)
        if n < self.settings.min_samples:
            return Evaluation(ts, self.life.state, evaluated=False, baseline=self._bound())
        ratio = round(self.window.total) / n
        condition = self._crosses(ratio)
        started, resolved = self.life.step(condition, self._clear(ratio))
        return Evaluation(ts, self.life.state, condition, True, started, resolved, value=ratio, baseline=self._bound())
