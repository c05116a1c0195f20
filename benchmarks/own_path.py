"""What the lone-agent check costs in the worst round (DESIGN §11, monitor/alerts/own_path.py).

    .venv/bin/python -m benchmarks.own_path [--targets 500,2000,5000] [--providers 10]

The check runs only in an alert round with a lone agent's alarm. Its worst case is an agent that
moved with every one of its targets alarming in the same round: each alarm is judged against the
other providers' network parts. Two cases per size, each timed once over the whole round:

- `moved`: every target's network part rose by 400 ms since the change, and every target alarms
  (each alarm is held; each other provider answers at its first target);
- `one provider's edge`: only provider p0's network part rose, and its targets alarm: no other
  provider gives evidence, so each is judged on the most targets the check looks at, and nothing
  is held.

Series are `PathHistory` rings of 48 samples, as the engine keeps them.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from monitor.alerts.attribution import HISTORY, PathHistory
from monitor.alerts.own_path import LoneAlarm, own_path_holds
from monitor.alerts.scope import Scope

STEP_S = 60.0
CHANGE_AT = HISTORY - 8  # the newest 8 samples are after the change


def fleet(targets: int, providers: int, rose: str, seed: int = 1):
    """Members and path histories; `rose` is "all" or the one provider whose network part rose."""
    rng = random.Random(seed)
    members, paths = {}, {}
    for i in range(targets):
        provider = f"p{i % providers}"
        target = f"{provider}/m{i}@r:short"
        members[target] = Scope(provider, "r", f"m{i}", "short")
        moved = rose in ("all", provider)
        history = PathHistory()
        for k in range(HISTORY):
            network = (120.0 + (400.0 if moved and k >= CHANGE_AT else 0.0)) * rng.lognormvariate(0, 0.1)
            history.add(k * STEP_S, (network, 500.0 * rng.lognormvariate(0, 0.1)))
        paths[target] = history
    return members, paths


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--targets", default="500,2000,5000")
    parser.add_argument("--providers", type=int, default=10)
    args = parser.parse_args(argv)
    print("| targets | case | alarming at once | held | round (s) |")
    print("| ---: | --- | ---: | ---: | ---: |")
    for n in (int(x) for x in args.targets.split(",")):
        for case, rose in (("moved", "all"), ("one provider's edge", "p0")):
            members, paths = fleet(n, args.providers, rose)
            alarming = [t for t, scope in members.items() if rose in ("all", scope.provider)]
            alarms = {t: LoneAlarm("a", CHANGE_AT * STEP_S) for t in alarming}

            def attribute(target, agent, since_s, paths=paths):
                history = paths.get(target)
                return None if history is None else history.attribute(since_s)

            started = time.perf_counter()
            held = own_path_holds(alarms, members, {}, attribute)
            elapsed = time.perf_counter() - started
            print(f"| {n:,} | {case} | {len(alarms):,} | {len(held):,} | {elapsed:.3f} |")
    print(f"\n{args.providers} providers; one process, this machine.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
