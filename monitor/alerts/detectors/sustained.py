"""The fast path of the regression detector: a large shift that holds, told from spikes by agreement.

The CUSUM charts (regression.py) weigh each sample against a noise model with
spikes: a sample far above the baseline is mostly explained as a spike, so a
shift of many noise sds adds only a few nats a sample and, discounted for
correlated noise, takes five or six samples to page. Production detectors
(Datadog's, Grafana's) keep a second, simpler test beside the accumulating one
for exactly this case: several consecutive samples all well outside a robust
band around the baseline.

Here: the newest `SAMPLES` residuals (log value minus the expected level, the
daily cycle included) must all be above a band of `BAND_SDS` noise sds (plus
`BAND_PER_PHI` per unit of the noise's lag-1 autocorrelation) and at
least `floor` (most of min_change), and must agree on one level: their range
within `SPREAD_SDS` noise sds. A sample 3x above the level or more is taken as
a spike: one in the window is allowed (a spike on top of a shifted level is
above the band too), two or more are a run of spikes and the fast path stays
out (the charts decide, on the spike threshold `h_big`). With the lifecycle's
`for_evaluations` (2) that is four samples in a row above the band: a single
spike, or one that runs on into the next sample, never fires it (the samples
around it are at the baseline).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

SAMPLES = 3
# Tune seeds: 2 sds caught 45% of the 2x steps within 3 samples at 0.67 false alarms a target-month
# (h_fast 8); 1.75 and 1.5 sds caught 50% and 56% but at 1.44 and 2.62 (noise correlated from sample
# to sample stays above a low band for four samples often enough); 2.5 sds caught 39%.
BAND_SDS = 2.0
# Correlated noise stays above a band for several samples far more often: under AR(1) noise with phi 0.6 four
# samples in a row above 2 sds happen about 1000 times as often as under independent noise (the first is
# 2.3% likely, each next one given the last about 24% instead of 2.3%). The band rises by this many sds per
# unit of phi, which keeps four in a row above it about as rare as at phi 0 (2.0 + 2 x 0.5 = 3 sds at phi 0.5:
# 0.13% x 5.8%^3; 3.2 at 0.6). Worked out from the AR(1) model, not tuned.
BAND_PER_PHI = 2.0
SPREAD_SDS = 4.5  # three samples of one level spread wider than 4.5 sds 0.3% of the time
# A sample this far above the level (3x) is as likely a spike as a shift: both generators' spikes are
# 3x or more, and in production a timeout-retry or a cold start is too. One such sample in the window
# is taken as a spike on top of the shifted level; two or more are a run of spikes, left to the charts.
SPIKE_LOG = math.log(3.0)


def sustained_shift(residuals: Sequence[float], scale: float, floor: float, phi: float = 0.0) -> bool:
    """Are the newest SAMPLES residuals all above the band and, but for one spike among them, alike?

    `phi`: the noise's lag-1 autocorrelation, which raises the band (BAND_PER_PHI)."""
    window = sorted(residuals[-SAMPLES:])
    if len(window) < SAMPLES or window[-2] > SPIKE_LOG:
        return False
    level = window[:-1] if window[-1] > SPIKE_LOG else window
    band = (BAND_SDS + BAND_PER_PHI * max(0.0, phi)) * scale
    return level[0] >= max(floor, band) and level[-1] - level[0] <= SPREAD_SDS * scale
