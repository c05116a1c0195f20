"""`firsttoken simulate`: run only the simulated providers."""

from __future__ import annotations

import argparse

from monitor.simulator.run import add_arguments as add_arguments
from monitor.simulator.run import run_simulator


def run(args: argparse.Namespace) -> int:
    return run_simulator(args)
