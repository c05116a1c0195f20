"""Detection quality on labelled synthetic series (DESIGN §7, issues 5 and 13).

    .venv/bin/python -m benchmarks.detection [--quick] [--jobs N] [--sigma 0.25] [--seed 1]
        [--suite original|conditions|both] [--seeds tune|held-out|both]

`original` (`original.py`) runs every alert kind on `synthetic_a`, the generator the detector was
tuned on; `conditions` (`conditions.py`) runs the regression rule per noise level on `synthetic_b`,
tune and held-out seeds apart.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence

from benchmarks.detection import conditions, original


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.detection", description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a quarter of the data: a smoke test, not a figure")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--sigma", type=float, default=0.25, help="lognormal noise, sd of the log (default 0.25)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--suite",
        choices=("original", "conditions", "both"),
        default="both",
        help="original: every alert kind on synthetic_a; conditions: synthetic_b per noise level, held-out seeds apart",
    )
    parser.add_argument(
        "--seeds",
        choices=("tune", "held-out", "both"),
        default="both",
        help="conditions suite: which seed range (tune while tuning; held-out only to report)",
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if args.suite in ("original", "both"):
        rows = original.run(original.QUICK if args.quick else original.FULL, args.jobs, args.sigma, args.seed)
        print(original.table(rows))
        print(
            f"\nnoise sigma {args.sigma:g}, seed {args.seed}, {args.jobs} processes, "
            f"{time.perf_counter() - started:.0f} s. "
            "Delays in samples after the first shifted sample (0 = that sample raised it).\n"
        )
    if args.suite in ("conditions", "both"):
        started = time.perf_counter()
        seed_sets = tuple(conditions.SEED_SETS) if args.seeds == "both" else (args.seeds,)
        rows = conditions.run(conditions.QUICK if args.quick else conditions.FULL, args.jobs, seed_sets=seed_sets)
        print(conditions.table(rows))
        print(
            f"\nsecond generator (synthetic_b), 5-minute sampling; tuned on seeds 1-999, **held-out** seeds "
            f"1001-1999 only reported; {args.jobs} processes, {time.perf_counter() - started:.0f} s."
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
