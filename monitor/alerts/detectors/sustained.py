"""The fast path of the regression detector: a large shift that holds, told from spikes by agreement.

The CUSUM charts (regression.py) weigh each sample against a noise model with
spikes: a sample far above the baseline is mostly explained as a spike, so a
shift of many noise sds adds only a few nats a sample and, discounted for
correlated noise, takes five or six samples to page. Production detectors
(Datadog's, Grafana's) keep a second, simpler test beside the accumulating one
for exactly this case: several consecutive samples all well outside a robust
band around the baseline.

Here: the newest `SAMPLES` residuals (log value minus the expected level, the
daily cycle included) must all be above a band of `BAND_SDS` noise sds and at
least `floor` (most of min_change), and must agree on one level: their range
within `SPREAD_SDS` noise sds, as samples of one shifted level scatter like
the noise, while a run of spikes scatters over the spikes' whole 3-12x range.
With the lifecycle's `for_evaluations` (2) that is four samples in a row: a
single spike, or one that runs on into the next sample, breaks the run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

SAMPLES = 3
BAND_SDS = 2.0  # 2.5 on the tune seeds: 2x within 3 samples 47% -> 39% at equal false alarms
SPREAD_SDS = 3.5
# A sample this far above the level (3x) is as likely a spike as a shift: both generators' spikes are
# 3x or more, and in production a timeout-retry or a cold start is too. One such sample in the window
# is taken as a spike on top of the shifted level; two or more are a run of spikes, left to the charts.
SPIKE_LOG = math.log(3.0)


def sustained_shift(residuals: Sequence[float], scale: float, floor: float) -> bool:
    """Are the newest SAMPLES residuals all above the band and, but for one spike among them, alike?"""
    window = sorted(residuals[-SAMPLES:])
    if len(window) < SAMPLES or window[-2] > SPIKE_LOG:
        return False
    level = window[:-1] if window[-1] > SPIKE_LOG else window
    return level[0] >= max(floor, BAND_SDS * scale) and level[-1] - level[0] <= SPREAD_SDS * scale
