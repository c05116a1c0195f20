"""CPU per sample of the `regression` detector alone (`SeriesDetector.observe`), no database, no engine.

    .venv/bin/python -m benchmarks.detector_cost [--generators e,f] [--months 3] [--repeat 3]

Runs the README's `regression` rule (ttft_ms, min_change 50%) over shift-free months of the named
generators at σ 0.3 (`detection_fresh.build`), `--repeat` times, and prints the best CPU µs a
sample. Compare two versions of the detector by running this in each checkout, alternating, in one
sitting: the machine's load moves the absolute figure, the ratio holds.
"""

from __future__ import annotations

import argparse
import time

from benchmarks.detection_fresh import build
from monitor.alerts.detectors.detect import SeriesDetector


def best_us_per_sample(generators: list[str], months: int, repeat: int) -> tuple[float, int]:
    cases = [build("free", k, 0.3, g) for g in generators for k in range(months)]
    points = [list(c.series.points()) for c in cases]
    n = sum(len(p) for p in points)
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        for case, series in zip(cases, points, strict=True):
            detector = SeriesDetector(case.settings)
            for ts, value in series:
                detector.observe(ts, value)
        best = min(best, (time.process_time() - started) / n * 1e6)
    return best, n


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--generators", default="e,f")
    parser.add_argument("--months", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    us, n = best_us_per_sample(args.generators.split(","), args.months, args.repeat)
    print(f"regression detector: {us:.1f} µs a sample (CPU, best of {args.repeat}; {n} samples of {args.generators})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
