"""`firsttoken run` for the end-to-end tests: the same Service, with alerting's clocks shortened.

    python tests/alerts/service_main.py --config FILE --spool-dir DIR [--tuning JSON]

Identical to monitor/commands/run.py except for the numbers passed to
`alert_jobs` (evaluate every second instead of 30 s, no settle delay, a short
grouping hold, fast retries), so a test can watch a page go out in seconds.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

from monitor.alerts.engine import EngineOptions, alert_jobs
from monitor.alerts.grouping import GroupPolicy
from monitor.alerts.outbox import RetryPolicy
from monitor.config import load_config
from monitor.eventloop import run_async
from monitor.service import Service, ServiceOptions


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--spool-dir", required=True)
    parser.add_argument("--tuning", default="{}")
    args = parser.parse_args()
    tuning = json.loads(args.tuning)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("httpx", "apscheduler"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    config = load_config(args.config)
    options = ServiceOptions(args.config, "127.0.0.1", 0, spool_dir=args.spool_dir, shutdown_grace_s=2.0)
    engine_options = EngineOptions(
        settle_s=0.0,
        group=GroupPolicy(group_wait_s=tuning.get("group_wait_s", 3.0), group_wait_intervals=2.0),
    )
    retry = RetryPolicy(base_s=tuning.get("retry_base_s", 0.5), cap_s=2.0, jitter=0.0)
    options.leader_jobs.update(
        alert_jobs(evaluate_every_s=1.0, deliver_every_s=1.0, options=engine_options, retry=retry)
    )
    return run_async(Service(options, config).run())


if __name__ == "__main__":
    sys.exit(main())
