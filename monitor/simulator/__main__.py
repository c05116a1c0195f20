"""`python -m monitor.simulator [--port 0] …`: the simulator without the main CLI."""

from monitor.simulator.run import run_simulator

raise SystemExit(run_simulator())
