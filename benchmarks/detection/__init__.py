"""Detection benchmarks: the labelled series generators and the scoring they share (DESIGN §7).

`.venv/bin/python -m benchmarks.detection` runs the suites on the two tune generators; the scripts
beside this package (`benchmarks.detection_fresh`, `detection_ceiling`, `detection_gap`,
`detection_ablation`, `detection_floor`) import what they need from it.

The generators, seeded, pure standard library, and when each was written:

- `synthetic_a`: the first generator; the detector was tuned on it (`original`, the default suite);
- `synthetic_b`: the second, written apart from the first; the detector's settings were
  also chosen on it, on its "tune" seeds (`conditions`; its "held-out" seeds are only reported);
- `synthetic_c`: the third, written after the detector was tuned and only run to report
  (`benchmarks.detection_fresh`, the default `--generator c`);
- `synthetic_d`: the fourth, written after the detector's last change was chosen, for the next
  judgement (`benchmarks.detection_fresh --generator d`);
- `synthetic_e`: the fifth, written before the adaptive chart and `min_duration` were judged and never
  tuned on (`benchmarks.detection_fresh --generator e`): AR(1) Student-t noise, a drifting level,
  noise bursts, one- and two-probe blips.

`real/` holds real series with labelled events for `benchmarks.detection_real`.

`scoring` holds what every suite shares: a case (one series, one rule, its labelled events), running
it through `SeriesDetector` as the service does, and the score (precision, recall, delays, false
alarms per target-month).
"""
